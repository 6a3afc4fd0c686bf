import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { generateKeyPairSync } from 'node:crypto';
import { newCustomer, stack } from '../helpers/stack';

describe('authentication', () => {
  it('issues an RS256 token with the documented claims and lifetime', async () => {
    const c = await newCustomer();
    const claims = jwt.decode(c.token, { complete: true })!;
    expect(claims.header.alg).to.equal('RS256');
    const payload = claims.payload as jwt.JwtPayload;
    expect(payload.sub).to.equal(c.customerId);
    expect(payload.client_id).to.equal(c.clientId);
    expect(payload.exp! - payload.iat!).to.equal(3600);
    expect(payload).to.include.keys('jti', 'iss', 'aud');
  });

  it('answers the token endpoint with accessToken, tokenType and expiresIn', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const res = await http.post('/api/oauth/client/token').send({ clientId: c.clientId, clientSecret: c.clientSecret });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ tokenType: 'Bearer', expiresIn: 3600 });
    expect(res.body.accessToken).to.be.a('string');
  });

  it('rejects a wrong secret and an unknown client with 401 INVALID_CLIENT', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    for (const body of [
      { clientId: c.clientId, clientSecret: 'nope' },
      { clientId: 'cli_unknown', clientSecret: c.clientSecret },
    ]) {
      const res = await http.post('/api/oauth/client/token').send(body);
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('INVALID_CLIENT');
    }
  });

  it('answers an unknown client no faster than a known one with a wrong secret (decision 0201)', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    // The fastest of a few tries each, the two kinds taken in turns: load on the host only slows a try down, never
    // speeds one up, and in turns a burst of load (the other shard's heavy test) slows both kinds, not one.
    const tryOnce = async (clientId: string) => {
      const started = process.hrtime.bigint();
      const res = await http.post('/api/oauth/client/token').send({ clientId, clientSecret: 'wrong' });
      expect([res.status, res.body.code]).to.deep.equal([401, 'INVALID_CLIENT']);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    let known = Infinity;
    let unknown = Infinity;
    for (let i = 0; i < 7; i++) {
      known = Math.min(known, await tryOnce(c.clientId));
      unknown = Math.min(unknown, await tryOnce(`cli_${'0'.repeat(24)}`));
    }
    // A secret check is one scrypt (tens of ms); a lookup that finds no client alone takes a few.
    expect(unknown).to.be.above(known / 2);
  });

  it('serves the public key as a JWKS that verifies issued tokens', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const res = await http.get('/.well-known/jwks.json');
    expect(res.status).to.equal(200);
    const key = res.body.keys[0];
    expect(key).to.include({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    const { createPublicKey } = await import('node:crypto');
    const pub = createPublicKey({ key, format: 'jwk' });
    expect(() => jwt.verify(c.token, pub, { algorithms: ['RS256'] })).not.to.throw();
  });

  it('takes the Bearer scheme in any case and after more than one space (RFC 9110 11.1, decision 0264)', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    for (const header of [`bearer ${c.token}`, `BEARER ${c.token}`, `bEaReR ${c.token}`, `Bearer   ${c.token}`]) {
      const res = await http.get('/api/accounts').set('Authorization', header);
      expect([res.status, res.body.code], header.slice(0, 12)).to.deep.equal([200, undefined]);
    }
    // A scheme is still a whole word, and the token still one token: these stay malformed.
    for (const header of [`Bearer${c.token}`, `Bearer\t${c.token}`, `Bearers ${c.token}`, `Bearer ${c.token} x`]) {
      const res = await http.get('/api/accounts').set('Authorization', header);
      expect([res.status, res.body.code], JSON.stringify(header.slice(0, 12))).to.deep.equal([401, 'UNAUTHORIZED']);
    }
  });

  describe('rejects with 401 UNAUTHORIZED', () => {
    const cases: Array<[string, (token: string, sub: string) => string | undefined]> = [
      ['a missing token', () => undefined],
      ['a malformed header', () => 'not-a-jwt at all'],
      ['a tampered token', (t) => t.slice(0, -4) + (t.endsWith('AAAA') ? 'BBBB' : 'AAAA')],
      [
        'an alg:none token',
        (_t, sub) =>
          jwt.sign({ sub, client_id: 'x' }, '', { algorithm: 'none', issuer: 'cambio', audience: 'cambio-api' }),
      ],
      [
        'a token signed by another key',
        (_t, sub) => {
          const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
          return jwt.sign({ sub }, privateKey, {
            algorithm: 'RS256',
            issuer: 'cambio',
            audience: 'cambio-api',
            expiresIn: 60,
          });
        },
      ],
      [
        'an HS256 token keyed with the public key',
        (_t, sub) => jwt.sign({ sub }, 'secret', { algorithm: 'HS256', issuer: 'cambio', audience: 'cambio-api' }),
      ],
    ];
    for (const [name, make] of cases) {
      it(name, async () => {
        const { http } = await stack();
        const c = await newCustomer();
        const token = make(c.token, c.customerId);
        const req = http.get('/api/accounts');
        const res = await (token === undefined
          ? req
          : req.set('Authorization', token.startsWith('not') ? token : `Bearer ${token}`));
        expect(res.status).to.equal(401);
        expect(res.body.code).to.equal('UNAUTHORIZED');
        expect(res.headers['x-request-id']).to.be.a('string');
      });
    }

    it('an expired token', async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      const expired = jwt.sign({ client_id: c.clientId }, services.signingKey.privateKey, {
        algorithm: 'RS256',
        subject: c.customerId,
        issuer: services.config.jwtIssuer,
        audience: services.config.jwtAudience,
        expiresIn: -10,
        keyid: services.signingKey.kid,
      });
      const res = await http.get('/api/accounts').set('Authorization', `Bearer ${expired}`);
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ code: 'UNAUTHORIZED', message: 'access token expired' });
    });

    it('a token for another audience', async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      const other = jwt.sign({}, services.signingKey.privateKey, {
        algorithm: 'RS256',
        subject: c.customerId,
        issuer: services.config.jwtIssuer,
        audience: 'someone-else',
        expiresIn: 60,
      });
      const res = await http.get('/api/accounts').set('Authorization', `Bearer ${other}`);
      expect(res.status).to.equal(401);
    });
  });
});
