// The outbox relay's claim is fair: round-robin across customers, oldest first within each, so one customer's
// backlog never stands in front of another's rows (decision 0072).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { claimStarts } from '../../db/repositories/outbox';
import { SqlBatch } from '../../db/batch';
import { stack } from '../helpers/stack';
import {
  newCustomerId,
  removeRequestedOperations,
  requestedOperations,
  runOperation,
} from '../helpers/requested-operations';

/** `n` outbox rows of `customerId` on `queue`, committed together, oldest first in the returned order. */
async function rowsOf(queue: string, customerId: string, n: number): Promise<string[]> {
  const { services } = await stack();
  const ids = Array.from({ length: n }, (_, i) => `fair-${customerId}-${String(i).padStart(5, '0')}-${randomUUID()}`);
  const base = Date.now();
  await inTransaction(systemEm(services.orm), async (tx) => {
    const batch = new SqlBatch();
    ids.forEach((workflowId, i) => {
      batch.add(
        // The row's creation time decides its place in its customer's line: one millisecond apart.
        `insert into workflow_starts (workflow_id, workflow_type, task_queue, args, search_attributes, created_at)
         values (?, 'fairTestWorkflow', ?, '[]'::jsonb, ?::jsonb, ?::timestamptz)`,
        [workflowId, queue, JSON.stringify({ CustomerId: customerId }), new Date(base - n + i)],
      );
    });
    await batch.run(tx);
  });
  return ids;
}

const LEASE_MS = 60_000;

describe('fair outbox claim', function () {
  this.timeout(60000);
  // Queues no relay serves: the rows stay until the test claims them.
  const queues: string[] = [];
  const newQueue = () => {
    const q = `fair-${randomUUID()}`;
    queues.push(q);
    return q;
  };

  after(async () => {
    const { services } = await stack();
    await systemEm(services.orm).execute('delete from workflow_starts where task_queue in (?)', [queues]);
    await removeRequestedOperations();
  });

  it("A's 1,000 queued rows do not hold up B's one: B's row is in the first batch", async () => {
    const { services } = await stack();
    const queue = newQueue();
    const a = await rowsOf(queue, `a-${randomUUID()}`, 1000);
    const [b] = await rowsOf(queue, `b-${randomUUID()}`, 1);
    const claimed = (await claimStarts(systemEm(services.orm), queue, 50, LEASE_MS)).map((r) => r.workflow_id);
    expect(claimed).to.have.length(50);
    expect(claimed).to.include(b);
    // The rest of the batch is A's 49 oldest (a pass starts its batch all at once, in no order).
    expect(claimed.filter((id) => id !== b)).to.have.members(a.slice(0, 49));
  });

  it('takes one row per customer before a second from anyone, and leased rows are not taken again', async () => {
    const { services } = await stack();
    const queue = newQueue();
    const a = await rowsOf(queue, `a-${randomUUID()}`, 100);
    const b = await rowsOf(queue, `b-${randomUUID()}`, 100);
    const c = await rowsOf(queue, `c-${randomUUID()}`, 1);
    const em = systemEm(services.orm);
    const first = (await claimStarts(em, queue, 7, LEASE_MS)).map((r) => r.workflow_id);
    expect(first).to.have.members([...a.slice(0, 3), ...b.slice(0, 3), c[0]]);
    const second = (await claimStarts(em, queue, 6, LEASE_MS)).map((r) => r.workflow_id);
    expect(second).to.have.members([...a.slice(3, 6), ...b.slice(3, 6)]);
  });

  it("a customer at its window of started operations waits in the outbox, and another's row does not", async () => {
    const { services } = await stack();
    const queue = newQueue();
    const em = systemEm(services.orm);
    const a = await newCustomerId();
    // A: three operations started and not yet run, five more waiting; B: one waiting.
    const aStarted = await requestedOperations(a, 3);
    const aWaiting = await requestedOperations(a, 5, queue);
    const [b] = await requestedOperations(await newCustomerId(), 1, queue);
    const claim = async (window?: number) =>
      (await claimStarts(em, queue, 50, LEASE_MS, { maxStartedPerCustomer: window })).map((r) => r.workflow_id);

    expect(await claim(3)).to.deep.equal([b]);
    // One of A's started operations runs: one place, for A's oldest waiting row.
    await runOperation(aStarted[0]);
    expect(await claim(3)).to.deep.equal([aWaiting[0]]);
    // A wider window lets the rest through, up to it: the claimed row counts as started once its lease is taken.
    expect(await claim(5)).to.have.members(aWaiting.slice(1, 3));
    // No window: everything due.
    expect(await claim()).to.have.members(aWaiting.slice(3));
  });

  it('rows of another queue are not claimed, and a queue with nothing due claims nothing', async () => {
    const { services } = await stack();
    const queue = newQueue();
    await rowsOf(newQueue(), `a-${randomUUID()}`, 5);
    expect(await claimStarts(systemEm(services.orm), queue, 50, LEASE_MS)).to.deep.equal([]);
  });
});
