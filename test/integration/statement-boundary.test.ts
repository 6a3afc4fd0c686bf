// An issued statement never changes (decision 0112): a posting stamps booked_at when it moves the balance, not when it
// commits, so a transaction that booked just before a period's end and commits after it must still be in that period's
// issued statement. The schedule's run at the boundary waits for it; the next period opens where this one closed; the
// stored bytes are the on-demand ones.
import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Client } from '@temporalio/client';
import { systemEm, type Em } from '../../db/orm';
import { SqlBatch } from '../../db/batch';
import { addPosting } from '../../db/repositories/ledger';
import { inTransaction } from '../../db/transaction';
import { Dec } from '../../domain/money';
import { ensureSchedules, periodicJobs, scheduleId } from '../../worker/schedules';
import { issueStatements } from '../../statements/issue';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { getStatement, type StatementBody } from '../helpers/statements';

// Short enough for a test, long enough that the run held at one boundary ends before the next fires (one due meanwhile
// would wait its turn: overlap BUFFER_ALL).
const INTERVAL = 'PT8S';
const PERIOD_MS = 8000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A posting a busy machine delayed past the boundary: its transaction rolls back and the next boundary is tried. */
class LateBooking extends Error {}
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

describe('Issued statements across a period boundary', function () {
  this.timeout(180000);

  let client: Client;
  let c: TestCustomer;
  let a: string;
  let b: string;
  const cfg = async () => ({ taskQueue: (await stack()).config.taskQueue, statementInterval: INTERVAL });

  before(async () => {
    client = (await stack()).services.temporal;
    c = await newCustomer('Boundary Ltda');
    a = (await activeAccount(c, ['BRL'])).id;
    b = (await activeAccount(c, ['BRL'])).id;
    await fund(c, a, 'BRL', '100.00');
  });

  after(async () => {
    await client?.schedule
      .getHandle(scheduleId(await cfg(), 'statements'))
      .delete()
      .catch(() => undefined);
  });

  const issuedRow = async (accountId: string, periodEnd: number, periodMs = PERIOD_MS) =>
    (await systemEm((await stack()).services.orm).execute(
      `select id, sha256 from statements
       where account_id = ? and asset = 'BRL' and period_start = ?::timestamptz and period_end = ?::timestamptz`,
      [accountId, new Date(periodEnd - periodMs).toISOString(), new Date(periodEnd).toISOString()],
    )) as Array<{ id: string; sha256: string }>;

  /** The issued statement of the period ending at `periodEnd`, as stored, checked against its hash and on demand. */
  async function issued(accountId: string, periodEnd: number): Promise<StatementBody> {
    const [row] = await eventually(
      () => issuedRow(accountId, periodEnd),
      (rows) => rows.length === 1,
      60_000,
      250,
    );
    const { http } = await stack();
    const stored = await http.get(`/api/statements/${row.id}`).set(c.auth).buffer(true);
    expect(stored.status).to.equal(200);
    expect(sha256(stored.text)).to.equal(row.sha256);
    const onDemand = await getStatement(c, accountId, {
      asset: 'BRL',
      periodStart: new Date(periodEnd - PERIOD_MS).toISOString(),
      periodEnd: new Date(periodEnd).toISOString(),
    });
    expect(onDemand.status).to.equal(200);
    expect(sha256(onDemand.text)).to.equal(row.sha256);
    return JSON.parse(stored.text) as StatementBody;
  }

  it('a posting booked before the end and committed after it is in the issued statement', async () => {
    const jobs = periodicJobs(await cfg()).filter((j) => j.workflowType === 'issueStatementsWorkflow');
    const handle = client.schedule.getHandle(jobs[0].id);
    // One left by another file with another interval would be kept as it is by ensureSchedules.
    await handle.delete().catch(() => undefined);
    await ensureSchedules(client, await cfg(), jobs);
    const orm = (await stack()).services.orm;
    const key = `test:boundary:${randomUUID()}`;

    // Post a→b 10.00 just before a boundary, in a transaction held open across it; a posting that a busy machine
    // delayed past the boundary is rolled back and tried at the next one.
    let boundary = 0;
    // Each leg's balance row stamps its own instant: the booking instant per account.
    let bookedAt: Record<string, string> | undefined;
    for (let attempt = 1; !bookedAt; attempt++) {
      boundary = Math.ceil((Date.now() + 2000) / PERIOD_MS) * PERIOD_MS;
      await sleepUntil(boundary - 500);
      try {
        bookedAt = await inTransaction(systemEm(orm), async (tx: Em) => {
          // This test's own connection keeps its transaction open longer than the app's sessions may.
          await tx.execute('set local idle_in_transaction_session_timeout = 0');
          const batch = new SqlBatch();
          const posted = addPosting(batch, {
            key,
            operationId: null,
            customerId: c.customerId,
            description: 'held across the boundary',
            postings: [
              { accountId: a, book: 'available', asset: 'BRL', amount: new Dec('-10.00') },
              { accountId: b, book: 'available', asset: 'BRL', amount: new Dec('10.00') },
            ],
          });
          await batch.run(tx);
          expect(posted()).to.equal(true);
          const legs = (await tx.execute(
            `select e.account_id, to_char(e.booked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
             from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
             where t.key = ?`,
            [key],
          )) as Array<{ account_id: string; at: string }>;
          const late = legs.find((l) => Date.parse(l.at) >= boundary);
          if (late) throw new LateBooking(late.at);
          // The boundary passes and the schedule's run for it starts while this transaction is open.
          await eventually(
            () => handle.describe(),
            (d) => d.info.recentActions.some((r) => r.scheduledAt.getTime() === boundary),
            30_000,
            100,
          );
          await new Promise((r) => setTimeout(r, 2000));
          // Nothing of the period is issued while a transaction that booked into it is open.
          expect(await issuedRow(a, boundary)).to.deep.equal([]);
          expect(await issuedRow(b, boundary)).to.deep.equal([]);
          return Object.fromEntries(legs.map((l) => [l.account_id, l.at]));
        });
      } catch (err) {
        if (!(err instanceof LateBooking) || attempt >= 3) throw err;
      }
    }

    const [tx] = (await systemEm(orm).execute('select id from ledger_transactions where key = ?', [key])) as Array<{
      id: string;
    }>;
    for (const [accountId, direction, closing] of [
      [a, 'DEBIT', '90.00'],
      [b, 'CREDIT', '10.00'],
    ] as const) {
      const closed = await issued(accountId, boundary);
      const entry = closed.entries.find((e) => e.id === tx.id);
      expect(entry, `${direction} in the issued statement`).to.include({ direction, bookedAt: bookedAt[accountId] });
      expect(entry!.amount.value).to.equal('10.00');
      expect(closed.closingBalance.value).to.equal(closing);
      const next = await issued(accountId, boundary + PERIOD_MS);
      expect(next.openingBalance.value).to.equal(closed.closingBalance.value);
      expect(next.entries.map((e) => e.id)).to.not.include(tx.id);
    }
  });

  it("a run whose clock is ahead of the database's waits until the database's clock passes the end", async () => {
    const { services, config } = await stack();
    const issuing = { statementInterval: 'PT2S', webhookTaskQueue: config.webhookTaskQueue };
    // A worker 2.5 s ahead: the period it means to issue has not ended yet on the database's clock.
    const started = Date.now();
    const result = await issueStatements({ orm: services.orm, config: issuing }, new Date(started + 2500));
    const end = Date.parse(result.periodEnd);
    expect(end).to.be.greaterThan(started);
    expect(Date.now()).to.be.at.least(end);
    expect(result.waitedMs).to.be.at.least(end - started - 50);
    expect(await issuedRow(a, end, 2000)).to.have.length(1);
  });
});
