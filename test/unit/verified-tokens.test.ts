import { expect } from 'chai';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { verifyToken } from '../../services/auth';
import { VerifiedTokens } from '../../services/verified-tokens';
import type { KeyPair } from '../../services/signing-keys';
import type { Config } from '../../config';
import { CambioError } from '../../domain/errors';

const pair = (): KeyPair => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid: randomUUID(), privateKey, publicKey };
};
const config = { jwtIssuer: 'cambio-test', jwtAudience: 'cambio-api' } as Config;
const key = pair();
const sign = (sub: string, opts: jwt.SignOptions = {}, k: KeyPair = key) =>
  jwt.sign({}, k.privateKey, {
    algorithm: 'RS256',
    subject: sub,
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    expiresIn: 3600,
    ...opts,
  });

function rejected(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CambioError);
    return (err as CambioError).message;
  }
  throw new Error('expected UNAUTHORIZED');
}

describe('verified-token cache', () => {
  it('answers a token it verified with the same customer, until the token expires', () => {
    let now = 1_000_000_000_000;
    const cache = new VerifiedTokens(10, () => now);
    const c1 = { customerId: 'c1', issuedAt: now / 1000 };
    cache.remember('t', c1, now / 1000 + 60);
    expect(cache.get('t')).to.deep.equal(c1);
    now += 59_999;
    expect(cache.get('t')).to.deep.equal(c1);
    now += 1; // exactly exp: jsonwebtoken calls this expired too
    expect(cache.get('t')).to.equal(undefined);
    expect(cache.size).to.equal(0);
  });

  it('is bounded and drops the least recently used token first', () => {
    const cache = new VerifiedTokens(2, () => 0);
    const of = (customerId: string) => ({ customerId, issuedAt: 0 });
    cache.remember('a', of('ca'), 100);
    cache.remember('b', of('cb'), 100);
    expect(cache.get('a')).to.deep.equal(of('ca')); // a is now the most recently used
    cache.remember('c', of('cc'), 100);
    expect(cache.size).to.equal(2);
    expect(cache.get('b')).to.equal(undefined);
    expect(cache.get('a')).to.deep.equal(of('ca'));
    expect(cache.get('c')).to.deep.equal(of('cc'));
  });

  it('verifyToken caches only what verified, and an expired cached token is verified again (and refused)', () => {
    const cache = new VerifiedTokens();
    const sub = randomUUID();
    const good = sign(sub);
    const issuedAt = (jwt.decode(good) as jwt.JwtPayload).iat;
    expect(verifyToken(config, key, good, cache)).to.deep.equal({ customerId: sub, issuedAt });
    expect(cache.size).to.equal(1);
    expect(verifyToken(config, key, good, cache)).to.deep.equal({ customerId: sub, issuedAt });
    // A token without `iat` is issued at 0: any revocation covers it (decision 0231).
    expect(verifyToken(config, key, sign(sub, { noTimestamp: true }))).to.deep.equal({ customerId: sub, issuedAt: 0 });

    // Another key, issuer or audience, or a tampered payload: refused and never remembered.
    const other = pair();
    expect(rejected(() => verifyToken(config, key, sign(sub, {}, other), cache))).to.equal('invalid access token');
    expect(rejected(() => verifyToken(config, key, sign(sub, { issuer: 'someone-else' }), cache))).to.equal(
      'invalid access token',
    );
    const [h, , s] = good.split('.');
    const forgedClaims = { sub: randomUUID(), iss: config.jwtIssuer, aud: config.jwtAudience, exp: 9999999999 };
    const forged = `${h}.${Buffer.from(JSON.stringify(forgedClaims)).toString('base64url')}.${s}`;
    expect(rejected(() => verifyToken(config, key, forged, cache))).to.equal('invalid access token');
    expect(cache.size).to.equal(1);

    // A token remembered with an exp already past is not served from the cache: jwt.verify refuses it.
    const expired = sign(sub, { expiresIn: -10 });
    cache.remember(expired, { customerId: sub, issuedAt: 0 }, Math.floor(Date.now() / 1000) - 10);
    expect(rejected(() => verifyToken(config, key, expired, cache))).to.equal('access token expired');
  });
});
