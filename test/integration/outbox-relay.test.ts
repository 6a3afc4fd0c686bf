// The outbox relay with several workers: concurrent passes never work the same row, and a pass that fails (as a
// worker dying mid-batch would) leaves its rows for the next one.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { systemEm } from '../../db/orm';
import { relayWorkflowStarts, startAfterCommit } from '../../api/services/workflow-starts';
import { stack } from '../helpers/stack';

// Rows dated far in the past, relayed with a minimum age only they pass: other tests' outbox rows are never touched.
const OLD = '2000-01-01T00:00:00Z';
const ONLY_OLD_ROWS = 20 * 365 * 24 * 3600;

/** The real client, with every workflow start counted per workflow id and passed through `before` first. */
function countingTemporal(real: Client, before: () => Promise<void> = async () => {}) {
  const starts: string[] = [];
  const workflow = new Proxy(real.workflow, {
    get(target, prop) {
      if (prop === 'start') {
        return async (type: string, opts: { workflowId: string }) => {
          starts.push(opts.workflowId);
          await before();
          return target.start(type, opts as never);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const temporal = new Proxy(real, { get: (t, p) => (p === 'workflow' ? workflow : Reflect.get(t, p, t)) }) as Client;
  return { temporal, starts };
}

async function outboxRows(n: number): Promise<string[]> {
  const { services } = await stack();
  const ids = Array.from({ length: n }, () => `relay-test-${randomUUID()}`);
  for (const id of ids) {
    await systemEm(services.orm).execute(
      `insert into workflow_starts (workflow_id, workflow_type, args, search_attributes, created_at) values (?, 'relayTestWorkflow', '[]', '{}', ?)`,
      [id, OLD],
    );
  }
  return ids;
}

const remaining = async (ids: string[]) => {
  const { services } = await stack();
  return Number((await systemEm(services.orm).execute('select count(*)::int as n from workflow_starts where workflow_id in (?)', [ids]))[0].n);
};

describe('outbox relay with several workers', function () {
  this.timeout(60000);
  // A task queue nobody polls: the started workflows just wait, and are terminated afterwards.
  const queue = `cambio-relay-test-${randomUUID()}`;
  const started: string[] = [];

  after(async () => {
    const { services } = await stack();
    await Promise.all(started.map((id) => services.temporal.workflow.getHandle(id).terminate('test cleanup').catch(() => undefined)));
  });

  it('two concurrent passes claim disjoint rows: each workflow is started once and every row is cleared', async () => {
    const { services } = await stack();
    const ids = await outboxRows(12);
    started.push(...ids);
    const slow = () => new Promise<void>((r) => setTimeout(r, 30));
    const a = countingTemporal(services.temporal, slow);
    const b = countingTemporal(services.temporal, slow);
    const [na, nb] = await Promise.all([
      relayWorkflowStarts(services.orm, a.temporal, queue, ONLY_OLD_ROWS, 6),
      relayWorkflowStarts(services.orm, b.temporal, queue, ONLY_OLD_ROWS, 6),
    ]);
    expect(na + nb).to.equal(12);
    const all = [...a.starts, ...b.starts];
    expect(all.filter((id) => ids.includes(id)).sort(), 'no row started by both relays').to.deep.equal([...ids].sort());
    expect(await remaining(ids)).to.equal(0);
    for (const id of ids) expect((await services.temporal.workflow.getHandle(id).describe()).status.name).to.equal('RUNNING');
  });

  it('after COMMIT, starts that finish together clear their rows in shared deletes, and later ones in their own', async () => {
    const { services } = await stack();
    const start = (workflowId: string) => startAfterCommit(services.orm, services.temporal, queue, { workflowId, workflowType: 'relayTestWorkflow', args: [], searchAttributes: {} });
    const together = await outboxRows(25);
    started.push(...together);
    expect(await Promise.all(together.map(start)), 'every start and its delete succeeded').to.deep.equal(together.map(() => true));
    expect(await remaining(together)).to.equal(0);
    // A start that comes while a delete is running waits for the next one, and is cleared too.
    const [first, second] = await outboxRows(2);
    started.push(first, second);
    const firstDone = start(first);
    await new Promise((r) => setImmediate(r));
    expect(await Promise.all([firstDone, start(second)])).to.deep.equal([true, true]);
    expect(await remaining([first, second])).to.equal(0);
  });

  it('rows claimed by a pass are skipped by others while it runs, and stay for the next pass when it fails', async () => {
    const { services } = await stack();
    const ids = await outboxRows(3);
    started.push(...ids);
    let fail!: (err: Error) => void;
    const gate = new Promise<void>((_, reject) => {
      fail = reject;
    });
    gate.catch(() => undefined);
    const dying = countingTemporal(services.temporal, () => gate);
    const first = relayWorkflowStarts(services.orm, dying.temporal, queue, ONLY_OLD_ROWS).then(() => undefined, (err: Error) => err);
    // The first pass holds its claims (blocked in its first start): another pass finds nothing to do.
    while (dying.starts.length === 0) await new Promise((r) => setTimeout(r, 10));
    const other = countingTemporal(services.temporal);
    expect(await relayWorkflowStarts(services.orm, other.temporal, queue, ONLY_OLD_ROWS)).to.equal(0);
    expect(other.starts.filter((id) => ids.includes(id))).to.deep.equal([]);

    fail(new Error('simulated: the worker lost Temporal mid-batch'));
    const err = await first;
    expect(err).to.be.instanceOf(AggregateError);
    expect(await remaining(ids)).to.equal(3);

    expect(await relayWorkflowStarts(services.orm, other.temporal, queue, ONLY_OLD_ROWS)).to.equal(3);
    expect(await remaining(ids)).to.equal(0);
  });
});
