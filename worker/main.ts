import { Client } from '@temporalio/client';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig } from '../config';
import { openOrm } from '../db/orm';
import { sessionSettingsOf } from '../db/session-settings';
import { DEFAULT_MID_RATES, TableRateSource } from '../domain/rates';
import { createActivities } from '../activities';
import { buildWorkflowBundle } from './build-bundle';
import { workerTelemetry } from './telemetry';
import { startWorkflowStartRelay } from './workflow-start-relay';
import { startEventPurge } from './event-retention';
import { startInboundPaymentSweep } from './inbound-payment-sweep';

// The worker's database pool, and so how many activities it runs at once (see Worker.create below).
const WORKER_POOL_SIZE = 20;

export async function runWorker() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { service: 'cambio-worker' } });
  // Signals are ours (below), not the SDK's: the relay must stop before the worker drains.
  Runtime.install({ logger: new DefaultLogger(sdkLevel(config.logLevel)), shutdownSignals: [], ...workerTelemetry(config.workerMetricsAddress) });
  const orm = await openOrm(config.databaseUrl, { poolMax: WORKER_POOL_SIZE, session: sessionSettingsOf(config), applicationName: 'cambio-worker' });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  // The activities' and the relay's client shares the worker's native connection: no grpc-js client beside it,
  // and the relay's starts can be eager (the first workflow task comes back in the start's answer).
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowBundle: { code: await buildWorkflowBundle() },
    activities: createActivities({ config, orm, rates: new TableRateSource(DEFAULT_MID_RATES), temporal }),
    // SIGTERM: activities already running get this long to finish (they are short transactions; a lock wait is
    // the long case), then they are cancelled and retried elsewhere, which their idempotency keys make safe.
    shutdownGraceTime: `${config.shutdownGraceSeconds}s`,
    // The sticky cache holds ~1 MB per workflow (SDK guidance), and most open workflows are idle: deposits waiting
    // for a payment, reviews waiting for a decision. Those are replayed from their short histories when they wake;
    // the ones that work at a given moment (tens, at our activity and request limits) stay cached. In
    // bench:webhooks (500 open deposits) 500 took the worker to ~490 MB and 100 to 324-394 MB once more workflow
    // tasks ran at once (the pollers below); 50 ends at 287-394 MB and delivers as fast. 25 measured the same
    // (280-350 MB): what moves the figure between runs is not the cache (bench:webhooks measures it).
    maxCachedWorkflows: 50,
    // Every activity is one database transaction on this process's pool (db/orm.ts, 20 connections). More
    // activities at once than connections only queue inside the pool while their 10 s start-to-close timeout runs
    // (the SDK's default is 100); the backlog waits in the task queue instead, where another worker can take it.
    maxConcurrentActivityTaskExecutions: WORKER_POOL_SIZE,
    // Local activities (swap and transfer settlement) are transactions on the same pool: the same bound.
    maxConcurrentLocalActivityExecutions: WORKER_POOL_SIZE,
    // Half of the workflow task pollers on the task queue itself, half on this worker's sticky queue (the SDK's
    // default gives the task queue 2 of 10). Almost every workflow task here is a workflow's first: a transfer, a
    // swap and a delivery whose first attempt succeeds are one task each; a deposit or a review waits idle after
    // its first. First tasks come only from the task queue, so with 2 pollers they queued there while the machine
    // had CPU to spare.
    nonStickyToStickyPollRatio: 0.5,
  });

  // Every workflow that a transaction records in the outbox is started here (worker/workflow-start-relay.ts).
  const relay = startWorkflowStartRelay({
    orm,
    temporal,
    taskQueue: config.taskQueue,
    databaseUrl: config.databaseUrl,
    eager: true,
    onError: (err) => log.warn({ err }, 'outbox relay: workflow starts failed; a later pass retries them'),
  });

  // Events past EVENT_RETENTION_DAYS go (worker/event-retention.ts).
  const eventPurge = startEventPurge({ orm, retentionDays: config.eventRetentionDays, log });
  // Inbound payments whose reporter died before the deposit's workflow decided them (worker/inbound-payment-sweep.ts).
  const sweepFailed = (err: unknown) => log.warn({ err }, 'inbound payment sweep failed; the next pass retries');
  const sweep = startInboundPaymentSweep({ orm, temporal, config }, sweepFailed);

  // Graceful stop: the relay finishes its pass and stops, the worker stops polling and lets running activities
  // finish (shutdownGraceTime), then connections and the pool close.
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return; // npm start's SIGTERM after the terminal's SIGINT is the same request
    stopping = true;
    log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'stopping worker: finishing in-flight activities');
    eventPurge.stop();
    void relay.stop().finally(() => worker.shutdown());
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  log.info({ taskQueue: config.taskQueue, address: config.temporalAddress }, 'Cambio worker running');
  try {
    await worker.run();
  } finally {
    await relay.stop();
    await sweep.stop();
    await connection.close();
    await orm.close(true);
    log.info('worker stopped');
  }
}

/** The SDK's own log lines follow LOG_LEVEL too (its levels are a subset of pino's). */
function sdkLevel(level: string): LogLevel {
  const map: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };
  return map[level] ?? 'INFO';
}

if (require.main === module) {
  runWorker().then(
    () => process.exit(0),
    (err) => {
      console.error('worker failed:', err);
      process.exit(1);
    },
  );
}
