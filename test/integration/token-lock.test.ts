// The token endpoint's lock, as a brute-forcer and the client's owner meet it: 100 wrong secrets sent at once for
// one client id from one address. Every 429 must carry the real wait (the right secret is accepted from that
// address once it has passed), and the owner's right secret from another address is never locked out.
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { createCustomer } from '../../services/auth';
import { stack } from '../helpers/stack';

const ATTACKER = '198.51.100.7';

describe('the token lock', function () {
  this.timeout(60_000);

  it('answers every 429 of a burst of wrong secrets with the real wait; the owner gets in from elsewhere', async () => {
    const { services } = await stack();
    // The production budgets (config/index.ts), behind a proxy so each request names its address.
    const config = {
      ...services.config,
      trustProxy: true,
      tokenClientFailuresPerMinute: 10,
      tokenAddressFailuresPerMinute: 30,
      tokenAddressPerSecond: 10,
    };
    const http = supertest(createApp({ ...services, config }).callback());
    const owner = await createCustomer(services.orm, 'Owner Ltda');
    const token = (secret: string, address: string) =>
      http
        .post('/api/oauth/client/token')
        .set('X-Forwarded-For', address)
        .send({ clientId: owner.clientId, clientSecret: secret });

    const start = Date.now();
    const burst = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const res = await token('sec_wrong', ATTACKER);
        return { at: Date.now(), status: res.status, retryAfter: Number(res.headers['retry-after']) };
      }),
    );
    const refused = burst.filter((r) => r.status === 429);
    // The budget is 10 failures a minute for this client from this address: guesses checked at once count too.
    expect(burst.filter((r) => r.status === 401).length).to.equal(10);
    expect(refused.length).to.equal(90);

    // Meanwhile, the owner from its own address.
    expect((await token(owner.clientSecret, '203.0.113.50')).status).to.equal(200);

    // The right secret from the attacker's address: refused until the lock ends, then accepted.
    const stillLocked: number[] = [];
    for (;;) {
      expect(Date.now() - start, 'the lock never ended').to.be.below(30_000);
      const sentAt = Date.now();
      const res = await token(owner.clientSecret, ATTACKER);
      if (res.status === 200) break;
      expect([res.status, res.body.code]).to.deep.equal([429, 'RATE_LIMITED']);
      stillLocked.push(sentAt);
      refused.push({ at: Date.now(), status: 429, retryAfter: Number(res.headers['retry-after']) });
      await new Promise((r) => setTimeout(r, 250));
    }
    // No 429 promised an end before a later attempt with the right secret was still refused.
    const lastRefusal = Math.max(...stillLocked);
    const early = refused.filter((r) => r.at + r.retryAfter * 1000 < lastRefusal);
    expect(
      early.map((r) => `${r.retryAfter}s at +${r.at - start}ms, still refused at +${lastRefusal - start}ms`),
    ).to.deep.equal([]);
  });
});
