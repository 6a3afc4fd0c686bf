// Edges of the token throttle found in issue 19: its memory per made-up client id, and whether Retry-After is the
// real wait before the right secret is accepted.
import { expect } from 'chai';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { TokenThrottle } from '../../api/overload/token-throttle';
import { CambioError } from '../../domain/errors';

const clock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

const DEFAULTS = { clientFailuresPerMinute: 10, addressFailuresPerMinute: 30, addressPerSecond: 10 };

/** The 429's Retry-After in seconds, or 0 when the attempt is admitted. */
function retryAfter(throttle: TokenThrottle, clientId: string, address: string): number {
  try {
    throttle.admit(clientId, address);
    return 0;
  } catch (err) {
    expect(err).to.be.instanceOf(CambioError).with.property('code', 'RATE_LIMITED');
    return (err as CambioError).details.retryAfterSeconds as number;
  }
}

describe('token throttle edges', () => {
  it('keeps no entry for client ids an address sends past its own rate', () => {
    const c = clock();
    const throttle = new TokenThrottle(DEFAULTS, c.now);
    // One address, 10,000 made-up client ids in a second: only the first ones are checked at all.
    for (let i = 0; i < 10_000; i++) {
      // Admitted attempts keep their reserved failure, as a wrong secret does.
      retryAfter(throttle, `made-up-${i}`, '203.0.113.7');
    }
    expect(throttle.entries()).to.be.below(100);
  });

  it('answers Retry-After with the real wait: the right secret is accepted then, and not a second before', () => {
    const c = clock();
    const throttle = new TokenThrottle(DEFAULTS, c.now);
    const waits: number[] = [];
    // 100 wrong secrets for one client id, 10 a second from one address (at the address rate).
    for (let i = 0; i < 100; i++) {
      const wait = retryAfter(throttle, 'cli_victim', '198.51.100.1');
      // An admitted attempt keeps its reserved failure: the secret was wrong.
      if (wait !== 0) waits.push(wait);
      c.advance(100);
    }
    expect(waits.length).to.be.greaterThan(0);
    const wait = retryAfter(throttle, 'cli_victim', '198.51.100.1');
    expect(wait).to.be.greaterThan(1);
    c.advance((wait - 1) * 1000);
    expect(retryAfter(throttle, 'cli_victim', '198.51.100.1'), 'refused a second before Retry-After').to.be.greaterThan(
      0,
    );
    c.advance(1000);
    expect(retryAfter(throttle, 'cli_victim', '198.51.100.1'), 'accepted at Retry-After').to.equal(0);
  });
});

describe('DeploymentRate', () => {
  it('admits the window points across callers, taking shares, and answers the wait after', async () => {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const { DeploymentRate } = await import('../../api/overload/deployment-rate');
    // One counter, two "processes" taking shares of it.
    const store = new RateLimiterMemory({ points: 30, duration: 5 });
    const a = new DeploymentRate(store, 30);
    const b = new DeploymentRate(store, 30);
    const waits = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).take('customer-1')));
    const admitted = waits.filter((w) => w === 0).length;
    expect(admitted).to.be.within(27, 30);
    expect(waits.filter((w) => w > 0).every((w) => w >= 1 && w <= 5)).to.equal(true);
  });

  it("spends a share only within the window it was taken from, however late the store's answer came", async () => {
    const { DeploymentRate } = await import('../../api/overload/deployment-rate');
    let now = 0;
    let asked = 0;
    // The store counts the share in a window that ends 1 s after it was asked; its answer comes back 1.5 s later
    // (a stalled connection): by then that window is over, and what is left of the share belongs to none.
    const slowStore = {
      async consume() {
        asked += 1;
        const msBeforeNext = 1000;
        now += 1500;
        return { msBeforeNext, consumedPoints: 10, remainingPoints: 90, isFirstInDuration: true };
      },
    };
    const rate = new DeploymentRate(slowStore as unknown as RateLimiterAbstract, 100, () => now);
    expect(await rate.take('customer-1')).to.equal(0);
    expect(await rate.take('customer-1')).to.equal(0);
    // The second request is in the next window: it asks the store again.
    expect(asked).to.equal(2);
  });
});

describe('dependencyFailure', () => {
  it(
    'turns what Postgres, the pool, the network and Temporal say when they are unavailable into 503, and ' +
      'nothing else',
    async () => {
      const { dependencyFailure } = await import('../../services/errors');
      const pg = (code: string) => Object.assign(new Error('pg'), { code });
      const unavailable = [
        pg('57P01'), // admin shutdown
        pg('08006'), // connection failure
        pg('55P03'), // lock_timeout
        pg('25P03'), // idle_in_transaction_session_timeout
        pg('53100'), // disk full
        pg('53200'), // out of memory, or of shared memory for locks
        pg('25006'), // read-only: a standby after a failover
        // A lock conflict that outlived inTransaction's retries, as MikroORM throws it (decision 0333).
        Object.assign(new Error('deadlock detected'), { name: 'DeadlockException', code: '40P01' }),
        pg('40001'),
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
        new Error('Connection terminated unexpectedly'),
        // node-postgres when a new connection does not open within connectionTimeoutMillis (DB_CONNECT_TIMEOUT_MS),
        // as MikroORM wraps it.
        Object.assign(new Error('timeout expired'), { name: 'DriverException' }),
        // node-postgres when a query gets no answer within query_timeout (a Postgres that stalls, decision 0228).
        new Error('Query read timeout'),
        // The same through knex (the statement in front) and MikroORM, as a stalled connection's query meets it.
        Object.assign(new Error('select 1 - Query read timeout'), { name: 'DriverException' }),
        Object.assign(new Error('wrapped by MikroORM'), { cause: pg('57P01') }),
        Object.assign(new Error('14 UNAVAILABLE: No connection established'), {
          code: 14,
          details: 'No connection established',
          metadata: {},
        }),
        new AggregateError([pg('08001')], 'several'),
        Object.assign(new Error("Namespace not found: 'cambio'"), { name: 'NamespaceNotFoundError' }),
      ];
      for (const err of unavailable) {
        const mapped = dependencyFailure(err);
        expect(mapped?.code, String(err)).to.equal('SERVICE_UNAVAILABLE');
        expect(mapped?.details.retryAfterSeconds).to.be.greaterThan(0);
      }
      for (const err of [
        pg('23505'),
        pg('23514'),
        pg('22P02'),
        new TypeError('x is undefined'),
        new Error('boom'),
        Object.assign(new Error('grpc not found'), { code: 5, details: 'x' }),
      ]) {
        expect(dependencyFailure(err), String(err)).to.equal(undefined);
      }
    },
  );
});
