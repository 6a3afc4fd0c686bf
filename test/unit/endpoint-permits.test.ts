import { expect } from 'chai';
import { EndpointPermits, MAX_WAIT_MS, Permit, SHORT_WAIT_MS } from '../../webhooks/endpoint-permits';

describe('per-subscription attempt permits', () => {
  let t = 0;
  const clock = () => t;
  const half = () => 0.5; // no jitter: the wait is the booked turn exactly

  const take = (p: EndpointPermits, id: string): Permit => {
    const answer = p.tryAcquire(id);
    if (!('permit' in answer)) throw new Error(`expected a permit, got a wait of ${answer.retryInMs} ms`);
    return answer.permit;
  };
  const wait = (p: EndpointPermits, id: string): number => {
    const answer = p.tryAcquire(id);
    if (!('retryInMs' in answer)) throw new Error('expected a busy answer');
    return answer.retryInMs;
  };

  beforeEach(() => {
    t = 1_000_000;
  });

  it('grants up to the cap per subscription, independently of other subscriptions', () => {
    const p = new EndpointPermits(2, 10_000, clock, half);
    const a1 = take(p, 'a');
    take(p, 'a');
    wait(p, 'a');
    take(p, 'b');
    a1.release();
    take(p, 'a');
  });

  it('takes back an abandoned permit without counting it as an attempt of the endpoint', () => {
    const p = new EndpointPermits(1, 10_000, clock, half);
    const measured = take(p, 'c');
    t += 8000;
    measured.release(); // one attempt of 8 s: the estimate
    const unused = take(p, 'c');
    t += 5;
    unused.abandon(); // given back unused (the subscription had no permit): the estimate stays 8 s
    take(p, 'c');
    expect(wait(p, 'c')).to.equal(8000);
  });

  it('spreads the waits of a backlog over the rate the endpoint completes attempts', () => {
    const p = new EndpointPermits(4, 10_000, clock, half);
    const first = [take(p, 'slow'), take(p, 'slow'), take(p, 'slow'), take(p, 'slow')];
    t += 10_000;
    first[0].release(); // took 10 s: the estimate
    take(p, 'slow');
    // Each busy answer books the next turn, 10 s / 4 apart: the backlog does not poll, it comes back in turn.
    expect([wait(p, 'slow'), wait(p, 'slow'), wait(p, 'slow')]).to.deep.equal([2500, 5000, 7500]);
  });

  it('guesses 1 s per attempt before any has ended, the timeout once the oldest is older; caps the wait', () => {
    const p = new EndpointPermits(1, 10_000, clock, half);
    take(p, 'hang');
    expect(wait(p, 'hang')).to.equal(1000);
    t += 4000;
    expect(wait(p, 'hang')).to.equal(10_000);
    for (let i = 0; i < 200; i++) p.tryAcquire('hang');
    expect(wait(p, 'hang')).to.equal(MAX_WAIT_MS);
  });

  it('spreads the capped waits too: a long backlog does not ask again all in one instant', () => {
    let r = 0;
    const draws = [0, 0.25, 0.75, 1];
    const p = new EndpointPermits(1, 10_000, clock, () => draws[r++ % draws.length]);
    take(p, 'hang');
    t += 4000;
    for (let i = 0; i < 200; i++) p.tryAcquire('hang'); // a backlog 2,000 s long, past the cap
    r = 0;
    const waits = draws.map(() => wait(p, 'hang'));
    expect(waits).to.deep.equal([0.8, 0.9, 1.1, 1.2].map((f) => f * MAX_WAIT_MS));
  });

  it(
    'lets a delivery wait in the process for a fast endpoint, in order, and sends it away after a short ' + 'wait',
    async () => {
      const real = new EndpointPermits(1, 10_000);
      const learn = await real.acquire('fast');
      if (!('permit' in learn)) throw new Error('expected a permit');
      learn.permit.release(); // an attempt that took ~0 ms: the endpoint is fast
      const first = await real.acquire('fast');
      if (!('permit' in first)) throw new Error('expected a permit');
      const queued = [real.acquire('fast'), real.acquire('fast')];
      first.permit.release();
      const second = await queued[0];
      if (!('permit' in second)) throw new Error('the first waiter gets the released permit');
      // The third is never released to: it is sent away after SHORT_WAIT_MS with a booked wait.
      const started = Date.now();
      const third = await queued[1];
      expect(third).to.have.property('retryInMs');
      expect(Date.now() - started).to.be.at.least(SHORT_WAIT_MS - 20);
    },
  );

  it('never keeps a delivery waiting in the process for a slow endpoint', async () => {
    const p = new EndpointPermits(1, 10_000, clock, half);
    take(p, 'slow');
    t += 1000; // the attempt in flight is already older than a short wait
    expect(await p.acquire('slow')).to.deep.equal({ retryInMs: 10_000 });
  });

  it('forgets a subscription idle for 10 minutes, and a permit released twice counts once', () => {
    const p = new EndpointPermits(1, 10_000, clock, half);
    const permit = take(p, 'a');
    t += 40;
    permit.release();
    permit.release();
    take(p, 'a');
    expect(wait(p, 'a')).to.equal(50); // paced on the 40 ms it knows (at least 50 ms)
    t += 11 * 60 * 1000;
    take(p, 'b');
    expect(p.size).to.equal(2); // 'a' still has an attempt in flight
  });
});

describe('per-subscription attempt permits on a real clock', () => {
  it('grants several permits in the same millisecond', () => {
    const p = new EndpointPermits(4, 10_000, () => 1_795_000_000_000);
    const permits = [p.tryAcquire('a'), p.tryAcquire('a'), p.tryAcquire('a'), p.tryAcquire('a')];
    expect(permits.every((x) => 'permit' in x)).to.equal(true);
    expect(p.tryAcquire('a')).to.have.property('retryInMs');
  });
});
