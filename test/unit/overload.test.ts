import { expect } from 'chai';
import { TokenBuckets } from '../../api/overload/token-bucket';
import { CustomerAdmission } from '../../api/overload/customer-limits';
import { Semaphore } from '../../services/semaphore';
import { TokenThrottle } from '../../api/overload/token-throttle';
import { CambioError } from '../../domain/errors';

const clock = () => {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
};

async function rejection(p: Promise<unknown>): Promise<CambioError> {
  try {
    await p;
  } catch (err) {
    return err as CambioError;
  }
  throw new Error('expected a rejection');
}

describe('overload building blocks', () => {
  describe('TokenBuckets', () => {
    it('spends the burst, then refills at the rate and answers the wait in whole seconds', () => {
      const c = clock();
      const buckets = new TokenBuckets({ perSecond: 2, burst: 3 }, c.now);
      expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).to.deep.equal([0, 0, 0]);
      expect(buckets.take('a')).to.equal(1);
      expect(buckets.take('b')).to.equal(0);
      c.advance(500);
      expect(buckets.take('a')).to.equal(0);
      expect(buckets.take('a')).to.equal(1);
    });

    it('peeks without spending', () => {
      const c = clock();
      const buckets = new TokenBuckets({ perSecond: 1 / 60, burst: 1 }, c.now);
      expect(buckets.peek('x')).to.equal(0);
      expect(buckets.peek('x')).to.equal(0);
      buckets.take('x');
      expect(buckets.peek('x')).to.equal(60);
    });

    it('forgets only buckets that are full again, so forgetting changes nothing', () => {
      const c = clock();
      const buckets = new TokenBuckets({ perSecond: 1 / 60, burst: 2 }, c.now);
      buckets.take('slow');
      buckets.take('slow');
      c.advance(61_000);
      // A sweep runs now; `slow` has one token back of two, so it must still be remembered.
      buckets.take('other');
      expect(buckets.take('slow')).to.equal(0);
      expect(buckets.take('slow')).to.be.greaterThan(0);
    });
  });

  describe('CustomerAdmission', () => {
    it('runs inFlight requests per customer, queues the next ones in order and refuses past the queue', async () => {
      const admission = new CustomerAdmission({ perSecond: 1000, burst: 1000, inFlight: 2, queue: 1 });
      const r1 = await admission.admit('a');
      await admission.admit('a');
      const order: string[] = [];
      const queued = admission.admit('a').then((release) => {
        order.push('queued ran');
        return release;
      });
      const refused = await rejection(admission.admit('a'));
      expect(refused.code).to.equal('RATE_LIMITED');
      expect(refused.details.retryAfterSeconds).to.equal(1);
      // Another customer has lanes of its own.
      const other = await admission.admit('b');
      other();
      expect(admission.running('a')).to.equal(2);
      r1();
      const r3 = await queued;
      expect(order).to.deep.equal(['queued ran']);
      expect(admission.running('a')).to.equal(2);
      r3();
      r3();
      expect(admission.running('a')).to.equal(1);
    });

    it('refuses past the rate with the seconds until the next token', async () => {
      const c = clock();
      const admission = new CustomerAdmission({ perSecond: 0.5, burst: 1, inFlight: 10, queue: 10 }, c.now);
      (await admission.admit('a'))();
      const refused = await rejection(admission.admit('a'));
      expect(refused.code).to.equal('RATE_LIMITED');
      expect(refused.details.retryAfterSeconds).to.equal(2);
    });
  });

  describe('Semaphore', () => {
    it('runs at most `limit` tasks, queues up to `queue`, refuses the rest', async () => {
      const sem = new Semaphore(1, 1);
      let running = 0;
      let peak = 0;
      let finish: () => void = () => {};
      const task = () =>
        new Promise<void>((resolve) => {
          running += 1;
          peak = Math.max(peak, running);
          finish = () => {
            running -= 1;
            resolve();
          };
        });
      const first = sem.run(task, () => new Error('refused'));
      const second = sem.run(task, () => new Error('refused'));
      const third = await rejection(sem.run(task, () => new CambioError('RATE_LIMITED', 'busy')));
      expect(third.code).to.equal('RATE_LIMITED');
      finish();
      await first;
      await new Promise((r) => setImmediate(r));
      finish();
      await second;
      expect(peak).to.equal(1);
    });
  });

  describe('TokenThrottle', () => {
    it('reserves a failure per client and address at admission and gives it back on success', () => {
      const c = clock();
      const throttle = new TokenThrottle(
        { clientFailuresPerMinute: 2, addressFailuresPerMinute: 100, addressPerSecond: 100 },
        c.now,
      );
      // Right secrets give their reservation back: any number of them.
      for (let i = 0; i < 5; i++) throttle.admit('cli_a', '10.0.0.1').release();
      // Two checks running at once (wrong secrets, not yet answered) already fill the budget of the pair.
      throttle.admit('cli_a', '10.0.0.1');
      throttle.admit('cli_a', '10.0.0.1');
      expect(() => throttle.admit('cli_a', '10.0.0.1'))
        .to.throw(CambioError)
        .with.property('code', 'RATE_LIMITED');
      // The owner from elsewhere, and other clients from that address, are untouched.
      expect(() => throttle.admit('cli_a', '10.0.0.2').release()).not.to.throw();
      expect(() => throttle.admit('cli_b', '10.0.0.1').release()).not.to.throw();
      c.advance(30_000);
      expect(() => throttle.admit('cli_a', '10.0.0.1')).not.to.throw();
    });
  });
});
