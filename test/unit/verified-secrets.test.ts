import { expect } from 'chai';
import { VERIFIED_SECRET_MS, VerifiedSecrets } from '../../services/verified-secrets';

describe('VerifiedSecrets (decision 0248)', () => {
  it('knows only the secret that matched, against the same stored hash, within its window', () => {
    let now = 1_000;
    const secrets = new VerifiedSecrets(10, () => now);
    secrets.remember('scrypt$salt$hash-1', 'sec_right');
    expect(secrets.has('scrypt$salt$hash-1', 'sec_right')).to.equal(true);
    expect(secrets.has('scrypt$salt$hash-1', 'sec_wrong')).to.equal(false);
    // A rotation stores another hash: the old secret is not taken on trust against it.
    expect(secrets.has('scrypt$salt$hash-2', 'sec_right')).to.equal(false);
    now += VERIFIED_SECRET_MS;
    expect(secrets.has('scrypt$salt$hash-1', 'sec_right')).to.equal(false);
  });

  it('forgets the least recently verified past its size', () => {
    const secrets = new VerifiedSecrets(2);
    secrets.remember('a', 's');
    secrets.remember('b', 's');
    secrets.remember('c', 's');
    expect([secrets.has('a', 's'), secrets.has('b', 's'), secrets.has('c', 's')]).to.deep.equal([false, true, true]);
  });
});
