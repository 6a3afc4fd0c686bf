// A configured key pair is checked at start: a pair that cannot sign RS256 tokens it then accepts would start an API
// that answers every token request or every call with an error (decision 0202).
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import type { Orm } from '../../db/orm';
import { loadSigningKey } from '../../services/signing-keys';

const pem = (bits: number, type: 'rsa' | 'ec' = 'rsa') => {
  const pair =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: bits })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    JWT_PRIVATE_KEY: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    JWT_PUBLIC_KEY: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
};
// A configured pair never reaches the database.
const noDatabase = undefined as unknown as Orm;

describe('a configured signing key pair', () => {
  it('is loaded when it is an RSA pair of at least 2048 bits', async () => {
    const key = await loadSigningKey(noDatabase, { ...pem(2048), JWT_KEY_ID: 'k1' });
    expect(key.kid).to.equal('k1');
  });

  it('is refused when the public key is not the private key’s', async () => {
    const env = { JWT_PRIVATE_KEY: pem(2048).JWT_PRIVATE_KEY, JWT_PUBLIC_KEY: pem(2048).JWT_PUBLIC_KEY };
    const err = await loadSigningKey(noDatabase, env).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.contain('JWT_PUBLIC_KEY is not the public key of JWT_PRIVATE_KEY');
  });

  for (const [name, env] of [
    ['an EC pair', pem(0, 'ec')],
    ['an RSA pair of 1024 bits', pem(1024)],
  ] as const) {
    it(`is refused when it is ${name} (RS256 needs RSA of 2048 bits or more)`, async () => {
      const err = await loadSigningKey(noDatabase, env).catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
      expect((err as Error).message).to.contain('RS256');
    });
  }
});
