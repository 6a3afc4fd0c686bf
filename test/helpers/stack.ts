import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, WorkflowExecutionDescription, WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pino from 'pino';
import supertest from 'supertest';
import type Koa from 'koa';
import { loadConfig, Config } from '../../config';
import { createDeps } from '../../services/deps';
import { createApp } from '../../api/app';
import { loadSigningKey } from '../../services/signing-keys';
import { createCustomer } from '../../services/auth';
import type { ServiceContext } from '../../services/context';
import { migrate } from '../../db/migrate';
import { createActivities } from '../../activities';
import { queueWorkerOptions, relayWindow } from '../../worker/queues';
import { startWorkflowStartRelay, WorkflowStartRelay } from '../../worker/workflow-start-relay';
import { SIM_CLIENT, startSimulator, type SimulatorProc } from './psp-simulator';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keepRailNoticesRegistered } from '../../worker/rail-notices';
import { recordRailStart } from '../../payments/reconciliation';
import { providerRails } from '../../rails';
import { workflowBundle } from './workflow-bundle';

/**
 * One real stack per test run: the fresh database `npm test` created (DATABASE_URL), the Temporal server it
 * started (TEMPORAL_ADDRESS), the Koa app driven in-process through supertest, and a worker on each task queue
 * of this run (main and webhooks) with its outbox relay, as worker/main.ts runs them. Built on first use, shared
 * by every integration file, stopped by the root hook.
 */
export interface Stack {
  services: ServiceContext;
  app: Koa;
  http: ReturnType<typeof supertest>;
  worker: Worker;
  /** The worker of the webhook task queue (delivery workflows and their attempts). */
  webhookWorker: Worker;
  /** The worker of the rails' task queue (provider calls). */
  railsWorker: Worker;
  /** The run's simulated PSP (PIX_PSP_URL of the stack and of the processes tests spawn). */
  psp: SimulatorProc;
  /** Where the stack's app listens for the PSP's notices (PUBLIC_BASE_URL of the processes tests spawn). */
  noticeBaseUrl: string;
  config: Config;
}

let pspEnv: Record<string, string> = {};
/** PIX_PSP_URL and the credentials of the run's simulated PSP, for processes the tests spawn. */
export const simulatorEnv = (): Record<string, string> => pspEnv;

let bundleDir: string | undefined;
let bundleEnv: Record<string, string> = {};
/** WORKFLOW_BUNDLE_PATH: the stack's workflow bundle, written once, for the worker processes tests spawn. */
export const workflowBundleEnv = (): Record<string, string> => bundleEnv;

let stackPromise: Promise<Stack> | undefined;
let noticeServer: Server | undefined;
let running: Promise<unknown> | undefined;
let relays: WorkflowStartRelay[] = [];
let startRelays: (() => WorkflowStartRelay[]) | undefined;

export function stack(): Promise<Stack> {
  stackPromise ??= build();
  return stackPromise;
}

async function build(): Promise<Stack> {
  if (!process.env.DATABASE_URL || !process.env.TEMPORAL_ADDRESS) {
    throw new Error('integration tests need DATABASE_URL and TEMPORAL_ADDRESS: run them through `npm test`');
  }
  // The sandbox pays out (and, with the rails, charges) through a simulated PSP of its own, as `npm start` does.
  const psp = await startSimulator();
  pspEnv = {
    PIX_PSP_URL: psp.apiUrl,
    PIX_CLIENT_ID: SIM_CLIENT.id,
    PIX_CLIENT_SECRET: SIM_CLIENT.secret,
    // The simulated bank of boletos is served by the same process (psp-simulator/bank-boleto/).
    BOLETO_BANK_URL: psp.url,
    BOLETO_CLIENT_ID: SIM_CLIENT.id,
    BOLETO_CLIENT_SECRET: SIM_CLIENT.secret,
  };
  const base = loadConfig({ ...process.env, ...pspEnv });
  const config: Config = {
    ...base,
    taskQueue: `cambio-test-${randomUUID()}`,
    webhookTaskQueue: `cambio-test-webhooks-${randomUUID()}`,
    railsTaskQueue: `cambio-test-rails-${randomUUID()}`,
    sandbox: true,
    webhookAllowPrivateUrls: true,
    // Every test client calls from 127.0.0.1, unlike real clients: the token endpoint's per-address budgets would
    // add the whole suite up (overload.test.ts tests them on apps of their own).
    tokenAddressPerSecond: 1_000_000,
    tokenAddressFailuresPerMinute: 1_000_000,
    // One test customer often drives more than a real client's share (the fuzz test, contention tests); the
    // per-customer rate is tested on apps of their own (overload.test.ts). In-flight and queue limits stay.
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    // Webhook tests wait for real retries and timeouts: seconds, not the production schedule (timers test that).
    webhookRetryScheduleSeconds: [1, 1],
    webhookTimeoutSeconds: 2,
  };
  // The SDK logs every worker state change at INFO; tests want its warnings only.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  // As the owner; the login the spawned API and worker processes use becomes a member of cambio_app.
  await migrate(config.databaseUrl, { applicationUrl: process.env.CAMBIO_TEST_APP_DATABASE_URL });
  // Its pooled connections close after 2 s unused: `npm test` runs three files at once against one Postgres (100
  // connections by default), and a burst of one file's must not keep slots another's spawned processes need.
  const deps = await createDeps(config, {
    log: pino({ level: process.env.LOG_LEVEL || 'silent' }),
    poolIdleTimeoutMs: 2000,
  });
  // The deployment's first start with its PSP, as the API and the worker record it (its reconciliation begins there).
  await recordRailStart(deps.orm, providerRails(config));
  const signingKey = await loadSigningKey(deps.orm);
  const services: ServiceContext = { ...deps, signingKey };
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  // One set of activities for both workers, as in worker/main.ts (the webhook permits are per process).
  const activities = createActivities({ config, orm: deps.orm, rates: deps.rates, temporal: deps.temporal });
  const bundle = await workflowBundle();
  // The workers tests spawn read this run's bundle instead of each bundling the same code again (3 s of CPU each).
  bundleDir = await mkdtemp(path.join(os.tmpdir(), 'cambio-test-workflows-'));
  const bundlePath = path.join(bundleDir, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle.code);
  bundleEnv = { WORKFLOW_BUNDLE_PATH: bundlePath };
  const namespace = config.temporalNamespace;
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: config.taskQueue,
    workflowBundle: bundle,
    activities,
  });
  const webhookWorker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.webhookTaskQueue,
    workflowBundle: bundle,
    activities,
    ...queueWorkerOptions('webhooks'),
  });
  const railsWorker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.railsTaskQueue,
    activities,
    ...queueWorkerOptions('rails'),
  });
  running = Promise.all([worker.run(), webhookWorker.run(), railsWorker.run()]);
  const relayClient = new Client({ connection, namespace: config.temporalNamespace });
  startRelays = () =>
    (
      [
        ['main', config.taskQueue],
        ['webhooks', config.webhookTaskQueue],
      ] as const
    ).map(([role, taskQueue]) =>
      startWorkflowStartRelay({
        orm: deps.orm,
        temporal: relayClient,
        taskQueue,
        databaseUrl: config.databaseUrl,
        eager: true,
        maxStartedPerCustomer: relayWindow(role, config),
        onError: (err) => process.stderr.write(`test stack: outbox relay ${taskQueue}: ${String(err)}\n`),
      }),
    );
  relays = startRelays();
  const app = createApp(services);
  // The PSP's notices need a real address: the app also listens on loopback, and the simulator is told to send
  // them there, as a worker registers them at start (worker/rail-notices.ts). Processes the tests spawn name the
  // same address (PUBLIC_BASE_URL), so a worker they start registers it again rather than a port nobody serves.
  const server = app.listen(0, '127.0.0.1');
  noticeServer = server;
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const noticeBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pspEnv = { ...pspEnv, PUBLIC_BASE_URL: noticeBaseUrl };
  // In place: tests change the stack's config object, which its workers and app read at each use.
  config.publicBaseUrl = noticeBaseUrl;
  const registration = keepRailNoticesRegistered(
    services.rails!,
    { ...config, publicBaseUrl: noticeBaseUrl },
    deps.log,
  );
  await registration.done;
  return {
    services,
    app,
    http: supertest(app.callback()),
    worker,
    webhookWorker,
    railsWorker,
    psp,
    noticeBaseUrl,
    config,
  };
}

/**
 * The description of a workflow once it exists: the worker's relay starts a workflow a few milliseconds after the
 * COMMIT that recorded it, so a test that looks right after an answer waits for it (not found until then).
 */
export function untilStarted(handle: WorkflowHandle): Promise<WorkflowExecutionDescription> {
  const describe = () =>
    handle.describe().catch((err: unknown) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)));
  return eventually(describe, (d) => d !== undefined, 10000, 20) as Promise<WorkflowExecutionDescription>;
}

/**
 * Runs `fn` while the stack's outbox relay is stopped, as when every worker is down: workflow starts committed
 * meanwhile wait in the outbox. A new relay starts afterwards and, as a restarted worker's would, starts them.
 */
export async function withoutRelay<T>(fn: () => Promise<T>): Promise<T> {
  await stack();
  await Promise.all(relays.map((r) => r.stop()));
  try {
    return await fn();
  } finally {
    relays = startRelays!();
  }
}

/** Whether any test has used the real stack yet (unit tests never do). */
export const stackStarted = (): boolean => stackPromise !== undefined;

export async function stopStack(): Promise<void> {
  if (!stackPromise) return;
  const s = await stackPromise;
  await Promise.all(relays.map((r) => r.stop()));
  s.worker.shutdown();
  s.webhookWorker.shutdown();
  s.railsWorker.shutdown();
  await running;
  noticeServer?.closeAllConnections();
  await new Promise<void>((resolve) => (noticeServer ? noticeServer.close(() => resolve()) : resolve()));
  await s.services.close();
  await s.psp.stop();
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
}

export interface TestCustomer {
  customerId: string;
  clientId: string;
  clientSecret: string;
  token: string;
  auth: { Authorization: string };
}

/** A customer with credentials and a token, obtained the way a client would: through the token endpoint. */
export async function newCustomer(name = 'Acme Ltda'): Promise<TestCustomer> {
  const s = await stack();
  const created = await createCustomer(s.services.orm, name);
  const res = await s.http
    .post('/api/oauth/client/token')
    .send({ clientId: created.clientId, clientSecret: created.clientSecret });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...created, token: res.body.accessToken, auth: { Authorization: `Bearer ${res.body.accessToken}` } };
}

export const idem = () => ({ 'X-Idempotency-Key': randomUUID() });

/** Polls until `fn` returns a value that satisfies `ok`, or fails with the last value seen. */
export async function eventually<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 20000,
  stepMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await fn();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, stepMs));
  } while (Date.now() < deadline);
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}
