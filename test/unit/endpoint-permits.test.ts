import { expect } from 'chai';
import { EndpointPermits, MAX_WAIT_MS, Permit } from '../../webhooks/endpoint-permits';

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

  it('spreads the waits of a backlog over the rate the endpoint completes attempts', () => {
    const p = new EndpointPermits(4, 10_000, clock, half);
    const first = [take(p, 'slow'), take(p, 'slow'), take(p, 'slow'), take(p, 'slow')];
    t += 10_000;
    first[0].release(); // took 10 s: the estimate
    take(p, 'slow');
    // Each busy answer books the next turn, 10 s / 4 apart: the backlog does not poll, it comes back in turn.
    expect([wait(p, 'slow'), wait(p, 'slow'), wait(p, 'slow')]).to.deep.equal([2500, 5000, 7500]);
  });

  it('guesses the attempt timeout before any attempt has ended, the age of the oldest if longer; caps the wait', () => {
    const p = new EndpointPermits(1, 10_000, clock, half);
    take(p, 'hang');
    t += 4000;
    expect(wait(p, 'hang')).to.equal(10_000);
    t += 12_000; // past the booked turn, and the attempt in flight is now older than the timeout
    expect(wait(p, 'hang')).to.equal(16_000);
    for (let i = 0; i < 200; i++) p.tryAcquire('hang');
    expect(wait(p, 'hang')).to.equal(MAX_WAIT_MS);
  });

  it('forgets an idle subscription, and a permit released twice counts once', () => {
    const p = new EndpointPermits(1, 10_000, clock, half);
    const permit = take(p, 'a');
    permit.release();
    permit.release();
    expect(p.size).to.equal(0);
    take(p, 'a');
    wait(p, 'a');
  });
});
