// The statement stream slots (api/overload/stream-slots.ts, decision 0251): a process-wide bound and a per-customer
// share, with a wait before a refusal, and a freed slot going to the waiter whose customer runs the fewest (then the
// one whose customer's turn came longest ago) among those whose customer has room (decisions 0357, 0361).
import { expect } from 'chai';
import { StreamSlots } from '../../api/overload/stream-slots';
import { CambioError } from '../../domain/errors';

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: CambioError) => ({ code: err.code, retryAfterSeconds: err.details?.retryAfterSeconds }),
  );

/** Records, in `order`, the name of each take as its slot is given, and passes its release on. */
const inOrder = (order: string[]) => (name: string) => (release: () => void) => (order.push(name), release);

describe('statement stream slots', () => {
  it("past a customer's share waits, then is 429 with Retry-After; other customers still get slots", async () => {
    const slots = new StreamSlots({ max: 4, perCustomer: 2, waitMs: 50 });
    await slots.take('a');
    await slots.take('a');
    const third = refusal(slots.take('a'));
    await slots.take('b');
    expect(slots.active).to.equal(3);
    expect(await third).to.deep.equal({ code: 'RATE_LIMITED', retryAfterSeconds: 1 });
  });

  it("past the process's bound waits, then is 503 with Retry-After", async () => {
    const slots = new StreamSlots({ max: 2, perCustomer: 2, waitMs: 50 });
    await slots.take('a');
    await slots.take('b');
    expect(await refusal(slots.take('c'))).to.deep.equal({ code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 2 });
  });

  it("a freed slot goes to the waiter whose customer's turn came longest ago; no newcomer takes it first", async () => {
    const slots = new StreamSlots({ max: 2, perCustomer: 1, waitMs: 1_000 });
    const releaseA = await slots.take('a');
    await slots.take('b');
    const order: string[] = [];
    const taken = inOrder(order);
    const a2 = slots.take('a').then(taken('a2'));
    const c = slots.take('c').then(taken('c'));
    releaseA();
    // Arrived after the release, before the woken waiter ran: the slot is c's already.
    const d = slots.take('d').then(taken('d'));
    releaseA(); // a second release of the same slot frees nothing
    (await c)();
    (await d)();
    await a2;
    // a, whose turn came last, after both, though its request is the oldest.
    expect(order).to.deep.equal(['c', 'd', 'a2']);
    expect(slots.active).to.equal(2);
  });

  it("a customer's own freed slot goes to another customer's waiter before its older ones", async () => {
    const slots = new StreamSlots({ max: 1, perCustomer: 1, waitMs: 1_000 });
    const releaseA = await slots.take('a');
    const order: string[] = [];
    const taken = inOrder(order);
    const a2 = slots.take('a').then(taken('a2'));
    const a3 = slots.take('a').then(taken('a3'));
    const q = slots.take('q').then(taken('q'));
    releaseA();
    (await q)();
    (await a2)();
    await a3;
    expect(order).to.deep.equal(['q', 'a2', 'a3']);
  });

  it('a freed slot goes to a customer running fewer before an older waiter of one running more', async () => {
    const slots = new StreamSlots({ max: 2, perCustomer: 2, waitMs: 1_000 });
    const releaseA = await slots.take('a');
    await slots.take('a');
    const order: string[] = [];
    const taken = inOrder(order);
    const a3 = slots.take('a').then(taken('a3'));
    const a4 = slots.take('a').then(taken('a4'));
    const q = slots.take('q').then(taken('q'));
    releaseA();
    (await q)();
    (await a3)();
    await a4;
    expect(order).to.deep.equal(['q', 'a3', 'a4']);
  });
});
