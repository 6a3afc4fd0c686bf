#!/usr/bin/env node
'use strict';
// `npm start`: everything Cambio needs on one machine, in the foreground.
//   build (TypeScript → dist/) → Postgres (started if local and down) → migrations → Temporal (TEMPORAL_ADDRESS, or
//   a dev server of our own that keeps its state in .cambio/temporal-dev.db) → in sandbox, the simulated providers
//   the user named no real one for (psp-simulator/providers.ts: each says which variable would name the real one
//   and what settings Cambio needs to use it; one process, its state kept per database:
//   .cambio/psp-simulator/<host>-<port>-<database>.json) → in sandbox, unless the user named a node, a local chain
//   (sandbox-chain/provider.ts; anvil with the test stablecoins, .cambio/sandbox-chain/...) → worker + API
//   (compiled JavaScript)
//   → waits for GET /readyz = 200 → prints the URLs, one line per simulated provider (or the user's own).
// It names no rail: what it sets and prints per provider comes from those two files (test/unit/rail-registry.test.ts).
// The worker and the API are supervised: when one dies on its own it is restarted after a back-off (1 s doubling
// to 30 s, reset after a stable minute), and the crash is logged. The Temporal dev server is not: when it dies,
// everything is stopped and the exit code is 1 (workflows need it; restart `npm start`).
// Ctrl-C / SIGTERM stops what it started: API and worker gracefully (they finish in-flight work), then the dev
// server.

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { ensureTemporalBinaries, isPortFree, preferredOrFreePort, ROOT } = require('./lib/temporal-binary');
const { ensurePostgres, redact } = require('./lib/postgres');
const {
  startDevServer,
  waitForTemporal,
  waitForWorker,
  ensureSearchAttributes,
  ACTIVITY_POLLERS,
} = require('./lib/temporal-server');
const { spawnChild, describeExit } = require('./lib/children');
const { supervise } = require('./lib/supervisor');
const { WORKER_NODE_ARGS, API_NODE_ARGS } = require('./lib/node-args');
const { simulatorStateFile } = require('./lib/psp-simulator-state');

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/cambio';
const READY_TIMEOUT_MS = Number(process.env.START_READY_TIMEOUT_MS || 120000);
const DEV_SERVER_DB = path.join(ROOT, '.cambio', 'temporal-dev.db');

// A closed pipe (`npm start | head`) must not kill us before we stop the children.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

const log = (msg) => console.log(`[start] ${msg}`);
const fail = (msg) => console.error(`[start] ${msg}`);

const env = { ...process.env };
env.PORT = env.PORT || '3000';
env.DATABASE_URL = env.DATABASE_URL || DEFAULT_DATABASE_URL;
// `npm start` is for one machine: sandbox on unless SANDBOX says otherwise (`SANDBOX=false npm start`). Every
// other way in (npm run api|worker, the image, compose) is off unless asked (config/index.ts).
if (env.SANDBOX === undefined || env.SANDBOX === '') env.SANDBOX = 'true';
const namespace = env.TEMPORAL_NAMESPACE || 'default';
const taskQueue = env.TEMPORAL_TASK_QUEUE || 'cambio';
const webhookTaskQueue = env.TEMPORAL_WEBHOOK_TASK_QUEUE || 'cambio-webhooks';
const railsTaskQueue = env.TEMPORAL_RAILS_TASK_QUEUE || 'cambio-rails';
// The queues the worker serves (WORKER_QUEUES, config/index.ts): all three unless narrowed.
const servedQueues = (env.WORKER_QUEUES || 'main,webhooks,rails').split(',').map((q) => q.trim());
const port = Number(env.PORT);
// As config/index.ts reads SANDBOX (set just above).
const sandbox = ['1', 'true', 'yes', 'on'].includes(env.SANDBOX.toLowerCase());
const PSP_SIM_PORT = 4010;
const SANDBOX_CHAIN_PORT = 8545;

/** Started processes (build, migrate, Temporal), in start order. */
const started = [];
/** Supervised worker and API: restarted when they crash, stopped before Temporal. */
const supervised = [];
let stopping = false;

// Above the API's and the worker's own SHUTDOWN_GRACE_SECONDS (25 s), so they end in-flight work themselves.
const APP_STOP_TIMEOUT_MS = 35000;

async function stopAll(code, reason) {
  if (stopping) return;
  stopping = true;
  if (reason) (code ? fail : log)(reason);
  const running = started.filter((c) => c.running());
  const names = [...supervised.map((s) => s.name).reverse(), ...running.map((c) => c.name).reverse()];
  if (names.length) log(`stopping ${names.join(', ')}`);
  await Promise.all(supervised.map((s) => s.stop(APP_STOP_TIMEOUT_MS)));
  const others = running.filter((c) => c.name !== 'temporal');
  await Promise.all(others.map((c) => c.stop(15000)));
  const temporal = running.find((c) => c.name === 'temporal');
  if (temporal) await temporal.stop(10000);
  if (names.length) log('stopped');
  process.exit(code);
}

// Ctrl-C reaches every process of the terminal's group, and npm forwards it to us once more: a repeat within a
// second is the same request. A later one means "stop waiting": kill what is left and leave.
let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (firstSignalAt) {
      if (Date.now() - firstSignalAt < 1000) return;
      fail(`${signal} received again; killing what is left`);
      const children = [...supervised.map((s) => s.current()), ...started];
      for (const c of children) if (c && c.running()) c.proc.kill('SIGKILL');
      process.exit(1);
    }
    firstSignalAt = Date.now();
    stopAll(0, `${signal} received`);
  });
}

/** Exit the whole thing when the Temporal dev server dies while we are not stopping. */
function watch(child) {
  child.exited.then((info) => {
    if (!stopping) stopAll(1, `${child.name} exited unexpectedly (${describeExit(info)}); stopping everything`);
  });
}

/** `node dist/<entry>.js`: compiled JavaScript, one process, so signals reach the application directly. */
function nodeChild(name, entry, childEnv, nodeArgs = []) {
  const file = path.join(ROOT, entry);
  if (!fs.existsSync(file)) throw new Error(`${entry} is missing; it is the ${name} entry point (did the build run?)`);
  return spawnChild(name, process.execPath, [...nodeArgs, entry], { cwd: ROOT, env: childEnv });
}

function oneShot(name, entry, childEnv) {
  const child = nodeChild(name, entry, childEnv);
  started.push(child);
  return child;
}

/** The worker or the API, restarted with back-off when it dies on its own. */
function superviseApp(name, entry, childEnv, nodeArgs = []) {
  supervised.push(supervise(name, () => nodeChild(name, entry, childEnv, nodeArgs), fail));
}

function getStatus(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        if (body.length < 2000) body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
  });
}

async function waitForReady(url) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!stopping) {
    const last = await getStatus(url);
    if (last.status === 200) return;
    if (Date.now() > deadline) {
      throw new Error(
        `${url} did not answer 200 within ${READY_TIMEOUT_MS / 1000} s ` +
          `(last: ${last.status || 'no connection'} ${String(last.body).trim().slice(0, 500)})`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The simulated providers (psp-simulator/providers.ts) and the sandbox chain's description, compiled. */
function providerDescriptions() {
  const { SIMULATED_PROVIDERS } = require(path.join(ROOT, 'dist', 'psp-simulator', 'providers.js'));
  const { sandboxChainProvider } = require(path.join(ROOT, 'dist', 'sandbox-chain', 'provider.js'));
  return { providers: SIMULATED_PROVIDERS, chain: sandboxChainProvider };
}

/** Sets on `childEnv` each of `settings` the user did not set (`env`); a value of theirs is kept. */
function giveUnset(childEnv, settings) {
  for (const [name, value] of Object.entries(settings)) if (!env[name]) childEnv[name] = value;
}

/** `  <label padded>value`, as the ready block's other lines. */
const readyLine = (label, value) => `  ${label.padEnd(15)}${value}`;

/**
 * sandbox-chain/main.js: anvil (state kept per database, beside the simulated PSP's) with the four test stablecoins
 * deployed and the hot wallet funded; resolves with the settings it prints (the node, the tokens, the keys). Stopped
 * with the rest; when it dies everything stops, as with the Temporal dev server (the chain is the rail's state).
 */
async function startSandboxChain(env, chain) {
  const port = await preferredOrFreePort(Number(env.SANDBOX_CHAIN_PORT || SANDBOX_CHAIN_PORT));
  const stateFile = simulatorStateFile(ROOT, env.DATABASE_URL).replace(
    `${path.sep}psp-simulator${path.sep}`,
    `${path.sep}sandbox-chain${path.sep}`,
  );
  const chainEnv = {
    ...env,
    SANDBOX_CHAIN_PORT: String(port),
    SANDBOX_CHAIN_STATE_FILE: stateFile,
    ...chain.startEnv(env),
  };
  const child = nodeChild('sandbox-chain', 'dist/sandbox-chain/main.js', chainEnv);
  started.push(child);
  watch(child);
  let out = '';
  const settings = await new Promise((resolve, reject) => {
    child.proc.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /sandbox chain ready (\{.*\})/.exec(out);
      if (found) resolve(JSON.parse(found[1]));
    });
    child.exited.then((info) => reject(new Error(`the sandbox chain did not start (${describeExit(info)})`)));
  });
  log(`Sandbox chain: anvil at ${settings[chain.chosenBy]} (state: ${path.relative(ROOT, stateFile)})`);
  return settings;
}

async function main() {
  if (!Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`PORT must be a TCP port, got "${env.PORT}"`);
  if (!(await isPortFree(port))) {
    throw new Error(
      `Port ${port} is already in use (another Cambio running?). Stop it, or choose another: PORT=3001 npm start`,
    );
  }

  log('Building (TypeScript → dist/)');
  const build = oneShot('build', 'scripts/build.js', env);
  const built = await build.exited;
  if (stopping) return;
  if (built.code !== 0) throw new Error(`The build failed (${describeExit(built)}); see the [build] lines above`);
  // Outside sandbox mode the API and the worker refuse to start without the deployment's own secrets
  // (config/production.ts): say so once here, rather than through a supervisor restarting them every few seconds.
  if (!sandbox) {
    const secrets = require(path.join(ROOT, 'dist', 'config', 'production.js'));
    const unsafe = secrets.unsafeSecrets(env);
    if (unsafe.length) {
      throw new Error(
        'With SANDBOX off the API and the worker do not start while a secret is unset or public: ' +
          `${secrets.describeUnsafeSecrets(unsafe)}. ${secrets.UNSAFE_SECRETS_HINT}`,
      );
    }
  }

  log(`Postgres: ${redact(env.DATABASE_URL)}`);
  await ensurePostgres(env.DATABASE_URL, { log });

  log('Applying database migrations');
  const migrate = oneShot('migrate', 'dist/db/migrate.js', env);
  const migrated = await migrate.exited;
  if (stopping) return;
  if (migrated.code !== 0)
    throw new Error(`Migrations failed (${describeExit(migrated)}); see the [migrate] lines above`);

  let temporalAddress = env.TEMPORAL_ADDRESS;
  let uiUrl;
  if (temporalAddress) {
    log(`Temporal: external server at ${temporalAddress} (namespace ${namespace})`);
    await waitForTemporal(temporalAddress, namespace, 60000);
    await ensureSearchAttributes(temporalAddress, namespace, { log });
  } else {
    const { temporal } = ensureTemporalBinaries({ log });
    const server = await startDevServer({
      temporal,
      dbFile: DEV_SERVER_DB,
      namespace,
      log,
      onChild: (child) => started.push(child),
    });
    if (stopping) return;
    watch(server.child);
    temporalAddress = server.address;
    uiUrl = server.uiUrl;
  }
  if (stopping) return;

  const childEnv = { ...env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: namespace };
  const { providers, chain } = providerDescriptions();
  // The sandbox pays and is paid through providers like production: the simulated one of each that the user named no
  // real one for (its `chosenBy` variable unset). They all run in one process; Cambio is given their settings.
  const simulated = sandbox ? providers.filter((p) => !env[p.chosenBy]) : [];
  if (simulated.length) {
    const simPort = await preferredOrFreePort(Number(env.PSP_SIM_PORT || PSP_SIM_PORT));
    const simUrl = `http://127.0.0.1:${simPort}`;
    // One state per deployment (decision 0111): a new database meets a PSP that has seen nothing of another's.
    const stateFile = env.PSP_SIM_STATE_FILE || simulatorStateFile(ROOT, env.DATABASE_URL);
    const simEnv = { ...env, PSP_SIM_PORT: String(simPort), PSP_SIM_STATE_FILE: stateFile };
    superviseApp('psp-simulator', 'dist/psp-simulator/main.js', simEnv);
    log(`Simulated PSP: ${simUrl} (state: ${path.relative(ROOT, stateFile)})`);
    for (const provider of simulated) {
      giveUnset(childEnv, provider.settings(simUrl));
      if (provider.startLine) log(provider.startLine(simUrl));
    }
  }
  // A local chain with the test stablecoins, unless the user named a node.
  let chainShown = env[chain.chosenBy];
  if (sandbox && !chainShown) {
    const settings = await startSandboxChain(env, chain);
    if (stopping) return;
    Object.assign(childEnv, settings);
    chainShown = chain.shown(settings);
  }
  superviseApp('worker', 'dist/worker/main.js', childEnv, WORKER_NODE_ARGS);
  superviseApp('api', 'dist/api/main.js', childEnv, API_NODE_ARGS);

  const base = `http://127.0.0.1:${port}`;
  log(`Waiting for ${base}/readyz`);
  await waitForReady(`${base}/readyz`);
  if (stopping) return;
  // /readyz speaks for the API; workflows also need the worker to poll its task queues.
  for (const [role, queue, pollers] of [
    ['main', taskQueue],
    ['webhooks', webhookTaskQueue],
    ['rails', railsTaskQueue, ACTIVITY_POLLERS],
  ]) {
    if (!servedQueues.includes(role)) continue;
    const abort = () => (stopping ? 'stopping' : undefined);
    await waitForWorker(temporalAddress, namespace, queue, READY_TIMEOUT_MS, abort, pollers);
    if (stopping) return;
  }
  if (stopping) return;

  // What the CLI needs to act on this service: outside sandbox mode an audited command also needs AUDIT_KEY, which
  // the user set for this start and has in its shell already.
  const cliEnv = sandbox ? ['SANDBOX=true'] : [];
  if (env.DATABASE_URL !== DEFAULT_DATABASE_URL) cliEnv.push(`DATABASE_URL=${env.DATABASE_URL}`);
  if (temporalAddress !== '127.0.0.1:7233') cliEnv.push(`TEMPORAL_ADDRESS=${temporalAddress}`);
  const lines = [
    '',
    'Cambio is ready.',
    `  API            ${base}`,
    `  Token          ${(env.AUTH_URL || base).replace(/\/+$/, '')}/api/oauth/client/token`,
    `  OpenAPI        ${base}/openapi.json`,
    `  API reference  ${base}/docs`,
    `  Metrics        ${base}/metrics`,
    `  JWKS           ${base}/.well-known/jwks.json`,
    `  Temporal       ${temporalAddress} (namespace ${namespace}, task queue ${taskQueue})`,
    `  Temporal UI    ${uiUrl || 'not started here (external Temporal server; use its own Web UI)'}`,
    ...providers.filter((p) => p.ready).map((p) => readyLine(p.ready.label, childEnv[p.chosenBy] || p.ready.none)),
    readyLine(chain.ready.label, chainShown || chain.ready.none),
    '',
    'Create a customer and its API credentials (the secret is shown once):',
    `  ${cliEnv.length ? `${cliEnv.join(' ')} ` : ''}npx cambio customer create --name Acme --json`,
    'then see README.md "Quickstart" for a token, an account and a quote.',
    ...providers.filter((p) => p.hint && childEnv[p.chosenBy]).map((p) => p.hint(childEnv[p.chosenBy])),
    'A crashed worker or API is restarted; Ctrl-C stops everything.',
    '',
  ];
  console.log(lines.join('\n'));
}

main().catch((err) => {
  stopAll(1, err && err.message ? err.message : String(err));
});
