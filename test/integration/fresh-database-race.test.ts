// Processes starting together on a fresh database: two migrators must not trip over each other, and two API
// processes must agree on one signing key, or each rejects the other's tokens. Raced with two ORMs (two pools,
// as two processes have) on a database of its own.
import { expect } from 'chai';
import { openOrm, Orm } from '../../db/orm';
import { migrate } from '../../db/migrate';
import { loadConfig } from '../../config';
import { loadSigningKey } from '../../services/signing-keys';
import { verifyToken } from '../../services/auth';
import jwt from 'jsonwebtoken';
import { randomUUID } from 'node:crypto';

const { createDatabase, dropDatabase, withDatabase } = require('../../scripts/lib/postgres');

describe('two processes starting on a fresh database', function () {
  this.timeout(60000);
  const url: string = withDatabase(process.env.DATABASE_URL!, `cambio_keyrace_${process.pid}_${Date.now()}`);
  const orms: Orm[] = [];

  before(async () => {
    await createDatabase(url);
  });

  after(async () => {
    await Promise.all(orms.map((o) => o.close(true)));
    await dropDatabase(url);
  });

  it('migrate at once: one applies every migration, the other waits and finds nothing to do', async () => {
    const [a, b] = await Promise.all([migrate(url), migrate(url)]);
    expect([a.length, b.length].sort()).to.deep.equal([0, a.length + b.length]);
    expect(a.length + b.length).to.be.at.least(4);
    orms.push(await openOrm(url, { poolMax: 2 }), await openOrm(url, { poolMax: 2 }));
  });

  it(
    "load the signing key at once: both end with the same key and accept each other's tokens (raced 5 " + 'times)',
    async () => {
      const config = loadConfig();
      const env = {}; // no JWT_PRIVATE_KEY: the generated, stored key
      for (let round = 0; round < 5; round++) {
        await orms[0].em.fork().execute('delete from signing_keys');
        const [a, b] = await Promise.all([loadSigningKey(orms[0], env), loadSigningKey(orms[1], env)]);
        expect(a.kid, `round ${round}`).to.equal(b.kid);
        const rows = await orms[0].em.fork().execute('select kid from signing_keys');
        expect(rows, `round ${round}: one stored key`).to.have.length(1);
        const sub = randomUUID();
        const sign = (k: typeof a) =>
          jwt.sign({}, k.privateKey, {
            algorithm: 'RS256',
            keyid: k.kid,
            subject: sub,
            issuer: config.jwtIssuer,
            audience: config.jwtAudience,
            expiresIn: 60,
          });
        expect(verifyToken(config, b, sign(a)).customerId).to.equal(sub);
        expect(verifyToken(config, a, sign(b)).customerId).to.equal(sub);
      }
    },
  );
});
