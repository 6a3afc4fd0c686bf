// What the API's probes and gauges read (GET /readyz, GET /metrics): a `select 1` on a connection of the probe's own,
// and whole-deployment counts hand-written through the EntityManager's connection (`em.execute`): they are aggregates
// over every customer, which the ORM's entity reads are not for. Tenant: none on purpose; no figure names a customer.
import { inTransaction } from '../transaction';
import type { Orm } from '../orm';
import { SessionSettings, sidePool } from '../session-settings';
import { backlogsByCustomer } from './operation-backlog';

// A readiness probe's bound, so /readyz answers within 1 s whatever is down (an orchestrator's probe timeout is
// typically 1 s): api/readiness.ts waits this long for each probe, and Postgres's bounds its statement and connection.
export const READINESS_PROBE_TIMEOUT_MS = 800;

/** Whether Postgres answers, asked on a connection of the probe's own. */
export interface DatabaseProbe {
  /** Resolves when Postgres answers `select 1` within READINESS_PROBE_TIMEOUT_MS. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A probe with one connection of its own, outside the application's pool: on the pool, the probe queued behind every
 * request (first come, first served), so a pool busy with slow requests read as "Postgres unavailable" and an
 * orchestrator pulled a busy but healthy process (decision 0348). Connected on the first ping; a broken connection
 * is replaced by the next. Its statement and connect bounds are the probe's own, so a stalled Postgres frees it.
 */
export function openDatabaseProbe(databaseUrl: string, session: SessionSettings): DatabaseProbe {
  const bound = READINESS_PROBE_TIMEOUT_MS;
  const pool = sidePool(
    databaseUrl,
    1,
    { ...session, statementTimeoutMs: bound, connectTimeoutMs: bound },
    'cambio-api readiness',
  );
  return {
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}

export interface DeploymentGauges {
  /** Workflow starts waiting in the outbox, and the age in seconds of the oldest (null when none waits). */
  outbox: { count: number; oldestAgeSeconds: number | null };
  /** The customers with the largest backlogs of operations accepted but not started (operation-backlog.ts). */
  backlogs: Array<{ customerId: string; count: number }>;
  /** Operations by type and status; absent when not asked for. */
  operations?: Array<{ type: string; status: string; count: number }>;
}

// The per-customer backlog gauge names customers: the largest backlogs only, so its series stay bounded.
const BACKLOG_SERIES = 100;

/**
 * The gauges' figures in one short transaction whose statements are cut at `timeoutMs`, so a slow database
 * cannot hold a scrape (nor the connection) for longer. The per-status operation counts scan a large table, so
 * they are read only when `withOperations`.
 */
export async function readDeploymentGauges(
  orm: Orm,
  timeoutMs: number,
  withOperations: boolean,
): Promise<DeploymentGauges> {
  return inTransaction(orm.em.fork(), async (em) => {
    await em.execute(`set local statement_timeout = ${Math.floor(timeoutMs)}`);
    // A start set aside for later (a charge's guard, decision 0243) is written with its due instant as `created_at`:
    // it waits in the outbox only from then on.
    const [outbox] = await em.execute<Array<{ n: string; age: string | null }>>(
      `select count(*) as n, extract(epoch from now() - min(created_at)) as age from workflow_starts
       where created_at <= now()`,
    );
    const gauges: DeploymentGauges = {
      outbox: { count: Number(outbox.n), oldestAgeSeconds: outbox.age === null ? null : Number(outbox.age) },
      backlogs: await backlogsByCustomer(em, BACKLOG_SERIES),
    };
    if (!withOperations) return gauges;
    const rows = await em.execute<Array<{ type: string; status: string; n: string }>>(
      `select type, status, count(*) as n from operations group by type, status`,
    );
    gauges.operations = rows.map((r) => ({ type: r.type, status: r.status, count: Number(r.n) }));
    return gauges;
  });
}

/** Money that may still leave while its provider has not answered: a withdrawal's payout or a payment's return. */
export type StuckKind = 'payout' | 'return';

export interface StuckFigure {
  kind: StuckKind;
  /** The rail it waits on (the withdrawal's payment instruction's, the payment's); null if the row names none. */
  rail: string | null;
  count: number;
  /** Age of the oldest, in seconds since it last changed, by the database's clock. */
  oldestAgeSeconds: number;
}

/**
 * Withdrawals PROCESSING and payments RETURNING unchanged for more than `afterSeconds`, counted per rail with the
 * age of the oldest (the gauges `cambio_payouts_stuck` and `cambio_returns_stuck`, decision 0120). One statement
 * over the two partial indexes of Migration20261202100000StuckPayoutIndexes, which hold only rows in those states,
 * so it reads a few index entries and their rows whatever the size of the tables; cut at `timeoutMs`. No rail
 * means nothing is stuck on it.
 */
export async function readStuckPayouts(orm: Orm, afterSeconds: number, timeoutMs: number): Promise<StuckFigure[]> {
  return inTransaction(orm.em.fork(), async (em) => {
    await em.execute(`set local statement_timeout = ${Math.floor(timeoutMs)}`);
    const rows = await em.execute<Array<{ kind: StuckKind; rail: string | null; n: string; age: string }>>(
      `select 'payout' as kind, o.intent #>> '{beneficiary,paymentInstruction,rail}' as rail, count(*) as n,
              extract(epoch from now() - min(o.updated_at)) as age
         from operations o
        where o.type = 'WITHDRAWAL' and o.status = 'PROCESSING'
          and o.updated_at < now() - make_interval(secs => ?)
        group by 2
       union all
       select 'return', p.rail, count(*), extract(epoch from now() - min(p.updated_at))
         from inbound_payments p
        where p.status = 'RETURNING' and p.updated_at < now() - make_interval(secs => ?)
        group by 2`,
      [afterSeconds, afterSeconds],
    );
    return rows.map((r) => ({ kind: r.kind, rail: r.rail, count: Number(r.n), oldestAgeSeconds: Number(r.age) }));
  });
}
