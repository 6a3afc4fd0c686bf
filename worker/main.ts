import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig } from '../config';
import { openOrm } from '../db/orm';
import { DEFAULT_MID_RATES, TableRateSource } from '../domain/rates';
import { createActivities } from '../activities';
import { relayWorkflowStarts } from '../api/services/workflow-starts';
import { buildWorkflowBundle } from './build-bundle';
import { workerTelemetry } from './telemetry';

// How often the outbox relay looks for workflow starts that a crashed API left behind.
const RELAY_INTERVAL_MS = 2000;

export async function runWorker() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { service: 'cambio-worker' } });
  Runtime.install({ logger: new DefaultLogger(sdkLevel(config.logLevel)), ...workerTelemetry(config.workerMetricsAddress) });
  const orm = await openOrm(config.databaseUrl);
  const clientConnection = await Connection.connect({ address: config.temporalAddress });
  const temporal = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowBundle: { code: await buildWorkflowBundle() },
    activities: createActivities({ config, orm, rates: new TableRateSource(DEFAULT_MID_RATES), temporal }),
    shutdownGraceTime: '10s',
    // Operations finish in seconds; deposits and reviews that wait for days are replayed from history when they
    // wake. Bounding the sticky cache bounds the worker's memory (bench:operations measures it).
    maxCachedWorkflows: 500,
  });

  const relay = setInterval(() => {
    relayWorkflowStarts(orm, temporal, config.taskQueue).catch((err) => log.warn({ err }, 'outbox relay pass failed'));
  }, RELAY_INTERVAL_MS);

  log.info({ taskQueue: config.taskQueue, address: config.temporalAddress }, 'Cambio worker running');
  try {
    await worker.run();
  } finally {
    clearInterval(relay);
    await clientConnection.close();
    await connection.close();
    await orm.close(true);
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
