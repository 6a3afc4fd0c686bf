import { Client as PgClient, Notification } from 'pg';
import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm';
import { SqlBatch } from '../db/batch';
import {
  addDeferStarts,
  addFinishStarts,
  addUnclaimedStartsCheck,
  claimStarts,
  listenForStarts,
} from '../db/repositories/outbox';
import { addClaimSignals } from '../db/repositories/workflow-decisions';
import { pgClientOptions, SessionSettings } from '../db/session-settings';
import { startRequestOf, startWorkflow } from '../workflows/start';
import { sendClaimedSignals } from './workflow-signal-relay';
import { RELAY_BATCH, RELAY_LEASE_MS, START_DEADLINE_MS } from './relay-limits';

// A sweep without a wake-up: catches a notification lost while the listening connection was down, and retries
// starts that failed (Temporal unreachable) without retrying them in a tight loop.
const SWEEP_INTERVAL_MS = 2000;
// How long to wait before listening again after the listening connection broke.
const RELISTEN_DELAY_MS = 1000;

// How soon a relay looks again at rows the per-customer window held back: the pace at which a customer at its
// window refills the engine as its started operations run. Each look that still claims nothing doubles the wait, up
// to WINDOW_RETRY_MAX_MS: a customer whose started operations never run (a workflow that never takes its first step)
// costs a pass a second, not twenty, while one whose operations do run is looked at again every 50 ms.
const WINDOW_RETRY_MS = 50;
const WINDOW_RETRY_MAX_MS = 1_000;

/**
 * Passes one relay runs at once. A pass waits for all its starts, and under load one slow start holds it for a
 * second or more: a row committed meanwhile (a quiet customer's one operation) would wait for that pass to end.
 * It gets a pass of its own instead, until this many run; their claims never overlap (SKIP LOCKED).
 */
export const MAX_CONCURRENT_PASSES = 3;

interface PassOptions {
  eager?: boolean;
  batch?: number;
  leaseMs?: number;
  maxStartedPerCustomer?: number;
}

/** What a pass found: rows it claimed, and whether it must look again. */
interface Pass {
  claimed: number;
  /** A full batch of starts or of signals: more may wait behind it. */
  full: boolean;
  /** Rows still due and unleased after the pass (asked only under a window): held back by it. */
  held: boolean;
}

/**
 * One pass of the relay of `taskQueue` (and of rows from before task queues were recorded). Any number of workers
 * run it at once. It claims rows with a lease in one short statement (SKIP LOCKED: two relays never claim the same
 * row), starts them with no transaction open, then in one more message deletes the started rows, defers the failed
 * ones (backoff per row, to the back of the line), claims the signal outbox's due rows (after the starts, so a
 * decision whose workflow this pass started finds it running) and, under a window, asks whether rows are still
 * waiting. A relay that dies mid-pass leaves its rows leased: they are claimed again once the lease runs out (a
 * start that already happened is found by USE_EXISTING / REJECT_DUPLICATE). Throws after the bookkeeping and the
 * signals when some starts failed.
 */
async function relayPass(orm: Orm, temporal: Client, taskQueue: string, opts: PassOptions = {}): Promise<Pass> {
  const em = orm.em.fork();
  const batchSize = opts.batch ?? RELAY_BATCH;
  const rows = await claimStarts(em, taskQueue, batchSize, opts.leaseMs ?? RELAY_LEASE_MS, {
    maxStartedPerCustomer: opts.maxStartedPerCustomer,
  });
  const results = await Promise.allSettled(
    rows.map((row) =>
      temporal.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        startWorkflow(temporal, taskQueue, startRequestOf(row), { eager: opts.eager }),
      ),
    ),
  );
  const after = new SqlBatch();
  addFinishStarts(
    after,
    rows.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.workflow_id),
  );
  addDeferStarts(
    after,
    rows.filter((_, i) => results[i].status === 'rejected').map((row) => row.workflow_id),
  );
  const held = opts.maxStartedPerCustomer ? addUnclaimedStartsCheck(after, taskQueue) : () => false;
  const signals = addClaimSignals(after, taskQueue, RELAY_BATCH, RELAY_LEASE_MS);
  await after.run(em);
  const sent = sendClaimedSignals(orm, temporal, signals.rows);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  if (failures.length) {
    await sent.catch(() => undefined);
    throw new AggregateError(
      failures,
      `outbox relay: ${failures.length} of ${rows.length} workflow start(s) failed and wait for a later pass`,
    );
  }
  await sent;
  return { claimed: rows.length, full: rows.length >= batchSize || signals.rows.length >= RELAY_BATCH, held: held() };
}

/** One pass (`relayPass`), for a caller that starts the outbox's rows by hand: how many rows it claimed. */
export async function relayWorkflowStarts(
  orm: Orm,
  temporal: Client,
  taskQueue: string,
  opts: PassOptions = {},
): Promise<number> {
  return (await relayPass(orm, temporal, taskQueue, opts)).claimed;
}

export interface WorkflowStartRelayOptions {
  orm: Orm;
  /** The client that starts workflows. */
  temporal: Client;
  taskQueue: string;
  /** Where to listen for wake-ups: a connection of its own, outside the pool (it stays open and idle). */
  databaseUrl: string;
  /**
   * The listening connection's connect timeout and keepalive, as every other connection's: without them a connect to
   * an unreachable Postgres, or a connection that died without a FIN, waits for the kernel's defaults (minutes, two
   * hours), and wake-ups fall back to the sweep all that time.
   */
  session?: SessionSettings;
  /** Eager start: `temporal` shares the native connection of a worker of `taskQueue` in this process. */
  eager: boolean;
  /** How often it looks without a wake-up (SWEEP_INTERVAL_MS). */
  sweepIntervalMs?: number;
  /**
   * A customer's operations started in Temporal and not yet run (REQUESTED, no outbox row), at most: its further
   * rows wait in the outbox (`claimStarts`). 0 or unset: no window.
   */
  maxStartedPerCustomer?: number;
  onError(err: unknown): void;
}

export interface WorkflowStartRelay {
  /** Stops listening and sweeping; resolves once a pass under way has finished. */
  stop(): Promise<void>;
}

/**
 * The outbox relay of one task queue: the only starter of the workflows that transactions record in
 * `workflow_starts`. A COMMIT that wrote rows for this queue wakes it at once (LISTEN), and it runs passes
 * (`relayPass`) until the outbox is empty: a wake-up starts a pass of its own beside those running, up
 * to MAX_CONCURRENT_PASSES, and past that one more pass after them, so rows committed meanwhile never wait for the
 * sweep. Any number of processes run a relay for the same queue; their passes never claim the same row.
 */
export function startWorkflowStartRelay(opts: WorkflowStartRelayOptions): WorkflowStartRelay {
  let stopped = false;
  const passes = new Set<Promise<void>>();
  let again = false;
  let listener: PgClient | undefined;
  let relisten: NodeJS.Timeout | undefined;

  const drain = async () => {
    do {
      again = false;
      try {
        const pass = await relayPass(opts.orm, opts.temporal, opts.taskQueue, {
          eager: opts.eager,
          maxStartedPerCustomer: opts.maxStartedPerCustomer,
        });
        if (pass.claimed > 0) heldRetryMs = WINDOW_RETRY_MS;
        // A full batch may have more behind it: go on without waiting for a wake-up. Rows committed during the pass
        // woke a pass of their own (or set `again`); rows another relay held locked are that relay's.
        if (pass.full) again = true;
        // Rows wait that this pass could not claim: the window holds them until the customer's started operations
        // run. No COMMIT announces that, so look again shortly (while they wait, and only then).
        else if (pass.held) lookAgainSoon();
      } catch (err) {
        opts.onError(err);
        return; // failed starts wait for the sweep
      }
    } while (again && !stopped);
  };

  let soon: NodeJS.Timeout | undefined;
  let heldRetryMs = WINDOW_RETRY_MS;
  const lookAgainSoon = () => {
    if (soon || stopped) return;
    soon = setTimeout(() => {
      soon = undefined;
      wake();
    }, heldRetryMs);
    heldRetryMs = Math.min(2 * heldRetryMs, WINDOW_RETRY_MAX_MS);
  };

  const wake = () => {
    if (stopped) return;
    if (passes.size >= MAX_CONCURRENT_PASSES) {
      again = true;
      return;
    }
    const pass: Promise<void> = drain().finally(() => passes.delete(pass));
    passes.add(pass);
  };

  const listen = () => {
    if (stopped) return;
    // Named after its queue (Postgres keeps 63 characters), so an operator can tell the relays apart.
    const applicationName = `cambio-relay ${opts.taskQueue}`.slice(0, 63);
    const client = new PgClient({
      connectionString: opts.databaseUrl,
      ...(opts.session ? pgClientOptions(opts.session, applicationName) : { application_name: applicationName }),
      keepAlive: true,
    });
    let lost = false;
    const lose = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (err && !stopped) opts.onError(err);
      void client.end().catch(() => undefined);
      if (!stopped) relisten = setTimeout(listen, RELISTEN_DELAY_MS);
    };
    client.on('error', lose);
    client.on('end', () => lose());
    client.on('notification', (n: Notification) => {
      // '' is a row from before task queues were recorded: any relay's.
      if (n.payload === opts.taskQueue || n.payload === '') wake();
    });
    listener = client;
    client
      .connect()
      .then(() => listenForStarts(client))
      // Rows committed while nothing listened: a pass now.
      .then(wake, lose);
  };

  listen();
  const sweep = setInterval(wake, opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS);

  return {
    async stop() {
      stopped = true;
      clearInterval(sweep);
      clearTimeout(soon);
      clearTimeout(relisten);
      await listener?.end().catch(() => undefined);
      await Promise.all(passes);
    },
  };
}
