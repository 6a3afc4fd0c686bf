import { Client } from '@temporalio/client';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, TransportError, Worker } from '@temporalio/worker';
import { readFile } from 'node:fs/promises';
import pino, { Logger } from 'pino';
import { Config, loadConfig } from '../config';
import { exitOnUnsafeSecrets } from '../config/production';
import { exitOnWrongChain } from '../rails/crypto/start-check';
import { openOrm } from '../db/orm';
import { dependencyFailure } from '../services/errors';
import { untilReachable } from '../services/until-reachable';
import { sessionSettingsOf } from '../db/session-settings';
import { rateBookFromConfig } from '../rates';
import { createActivities } from '../activities';
import { buildWorkflowBundle } from './build-bundle';
import { workerTelemetry } from './telemetry';
import { queueWorkerOptions, relayWindow, servedQueues, WORKER_POOL_SIZE } from './queues';
import { startWorkflowStartRelay } from './workflow-start-relay';
import { ensureSchedules } from './schedules';
import { providerRails, railsFromConfig } from '../rails';
import { railStores } from '../activities/rail-stores';
import { recordRailStart } from '../payments/reconciliation';
import { keepRailNoticesRegistered } from './rail-notices';

export async function runWorker() {
  exitOnUnsafeSecrets('worker');
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { service: 'cambio-worker' } });
  await exitOnWrongChain('worker', config, (m) => log.warn(m));
  // Signals are ours (below), not the SDK's: the relays must stop before the workers drain.
  Runtime.install({
    logger: new DefaultLogger(sdkLevel(config.logLevel)),
    shutdownSignals: [],
    ...workerTelemetry(config.workerMetricsAddress),
  });
  const { orm, connection } = await untilDependenciesAnswer(config, log);
  // The activities' and the relays' client shares the workers' native connection: no grpc-js client beside it,
  // and the relays' starts can be eager (the first workflow task comes back in the start's answer).
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const rails = railsFromConfig(config, undefined, railStores(orm, temporal, config));
  // One set of activities for both queues: the per-subscription permits of webhook attempts are per process.
  const rates = rateBookFromConfig(config, orm, log);
  if (rates.warning) log.warn(rates.warning);
  const activities = createActivities({ config, orm, rates: rates.book, temporal, rails });
  const queues = servedQueues(config);
  // Providers' notices come to the API: a worker of the rails' queue registers their URL for every rail that takes
  // them (worker/rail-notices.ts), from the start and in the background, retrying while a provider is down.
  const registration = queues.some((q) => q.role === 'rails')
    ? keepRailNoticesRegistered(rails, config, log)
    : undefined;
  // Bundled at start unless the deployment built it with this same code (the Docker image does).
  const code = config.workflowBundlePath
    ? await readFile(config.workflowBundlePath, 'utf8')
    : await buildWorkflowBundle();
  // One Temporal worker per queue (WORKER_QUEUES, both by default): deliveries have their own slots, so a
  // receiver that hangs can fill only delivery slots, never the ones that settle money.
  const workers = await Promise.all(
    queues.map(({ role, taskQueue }) =>
      Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue,
        // The rails' queue runs provider calls only: no workflow is ever started on it. The SDK's deadlock detector
        // (isolateExecutionTimeout) stays: it costs a thread per call into a workflow, about a tenth of a
        // transfer's CPU, and keeps one looping workflow from stopping all the others (docs/decisions/0096).
        ...(role === 'rails' ? {} : { workflowBundle: { code } }),
        activities,
        // SIGTERM: activities already running get this long to finish (short transactions, or one webhook POST
        // bounded by WEBHOOK_TIMEOUT_SECONDS), then they are cancelled and retried elsewhere, which their
        // idempotency keys make safe.
        shutdownGraceTime: `${config.shutdownGraceSeconds}s`,
        stickyQueueScheduleToStartTimeout: `${config.workerStickyTimeoutSeconds}s`,
        ...queueWorkerOptions(role),
      }),
    ),
  );

  // Every workflow that a transaction records in the outbox is started by the relay of its task queue
  // (worker/workflow-start-relay.ts), in a process that serves that queue.
  const relays = queues
    .filter(({ role }) => role !== 'rails')
    .map(({ role, taskQueue }) =>
      startWorkflowStartRelay({
        orm,
        temporal,
        taskQueue,
        databaseUrl: config.databaseUrl,
        session: sessionSettingsOf(config),
        eager: true,
        maxStartedPerCustomer: relayWindow(role, config),
        onError: (err) =>
          log.warn({ err, taskQueue }, 'outbox relay: workflow starts failed; a later pass retries them'),
      }),
    );
  const stopRelays = () => Promise.all(relays.map((r) => r.stop()));
  const shutdownWorkers = () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };

  // The periodic jobs (event purge, inbound payment sweep, statements) are Temporal Schedules, created once per
  // deployment by whichever worker of the main queue starts first (worker/schedules.ts).
  if (queues.some((q) => q.role === 'main')) {
    await ensureSchedules(temporal, config, undefined, (job, err) =>
      log.warn({ err, schedule: job.id }, 'schedule: its run at start was not triggered; it runs at its next interval'),
    );
  }

  // Graceful stop: the relays finish their passes and stop, the workers stop polling and let running activities
  // finish (shutdownGraceTime), then connections and the pool close.
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return; // npm start's SIGTERM after the terminal's SIGINT is the same request
    stopping = true;
    log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'stopping worker: finishing in-flight activities');
    registration?.stop();
    void stopRelays().finally(shutdownWorkers);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  log.info({ taskQueues: queues.map((q) => q.taskQueue), address: config.temporalAddress }, 'Cambio worker running');
  try {
    // One worker failing stops the other (the process exits and is restarted whole), after it has drained.
    const stopOthersOnFailure = (err: unknown) => {
      shutdownWorkers();
      throw err;
    };
    const runs = await Promise.allSettled(workers.map((w) => w.run().catch(stopOthersOnFailure)));
    const failed = runs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    registration?.stop();
    await stopRelays();
    await rails.close();
    await connection.close();
    await orm.close(true);
    log.info('worker stopped');
  }
}

/**
 * The pool and Temporal's connection, tried again while Postgres or Temporal cannot be reached. A worker started
 * during an outage waits in place and works as soon as both answer (decision 0105). Any other failure ends the start.
 */
async function untilDependenciesAnswer(config: Config, log: Logger) {
  const opened = await untilReachable(
    async () => {
      const orm = await openOrm(config.databaseUrl, {
        poolMax: WORKER_POOL_SIZE,
        session: sessionSettingsOf(config),
        applicationName: 'cambio-worker',
      });
      try {
        // Where this deployment's reconciliation of each rail begins, if this is its first start (decision 0111).
        await recordRailStart(orm, providerRails(config));
        return { orm, connection: await NativeConnection.connect({ address: config.temporalAddress }) };
      } catch (err) {
        await orm.close(true).catch(() => undefined);
        throw err;
      }
    },
    {
      log,
      unreachable: (err) =>
        err instanceof TransportError ? 'Temporal' : dependencyFailure(err) ? 'Postgres' : undefined,
      meanwhile: 'the worker starts once it can',
    },
  );
  // Without `stopping`, only a success ends the wait.
  return opened!;
}

/** The SDK's own log lines follow LOG_LEVEL too (its levels are a subset of pino's). */
function sdkLevel(level: string): LogLevel {
  const map: Record<string, LogLevel> = {
    trace: 'TRACE',
    debug: 'DEBUG',
    info: 'INFO',
    warn: 'WARN',
    error: 'ERROR',
    fatal: 'ERROR',
    silent: 'ERROR',
  };
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
