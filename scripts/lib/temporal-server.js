'use strict';
// The Temporal side of `npm start` and `npm test`:
//  - startDevServer(): runs `temporal server start-dev` with Cambio's search attributes registered;
//  - waitForTemporal() / ensureSearchAttributes(): for an external server named by TEMPORAL_ADDRESS.

const fs = require('node:fs');
const path = require('node:path');
const { ROOT, preferredOrFreePort, waitForPort } = require('./temporal-binary');
const { spawnChild, describeExit } = require('./children');

const SEARCH_ATTRIBUTES_FILE = path.join(ROOT, 'workflows', 'search-attributes.ts');
// Only used when workflows/search-attributes.ts cannot be loaded or parsed; keep in step with that file.
const FALLBACK_SEARCH_ATTRIBUTES = { CustomerId: 'Keyword', OperationType: 'Keyword', OperationStatus: 'Keyword' };
// temporal.api.enums.v1.IndexedValueType, as the operator service expects it.
const INDEXED_VALUE_TYPE = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};
const GRPC_ALREADY_EXISTS = 6;
// The dynamic config of every Temporal server Cambio runs: Task Queue Fairness, one write partition per task queue,
// sub-second timers. One file, which docker-compose.yml mounts into its server and the dev server reads here; what
// each value is for is said there.
const DYNAMIC_CONFIG_FILE = path.join(ROOT, 'deploy', 'temporal', 'dynamic-config.yaml');
// A state file (npm start's) is SQLite in rollback-journal mode with a full sync by default: two or three fsyncs per
// write. In WAL mode with synchronous=NORMAL a commit syncs nothing until a checkpoint, and a killed server loses
// nothing it committed (only the machine losing power can cost the last commits of a local dev server). Transfers
// through a file-backed server: 11.5 completed/s by default, 12.8 with WAL and a full sync, 19.5 with these, about
// what an in-memory server does (docs/decisions/0094).
const STATE_FILE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

let cachedAttributes;

/**
 * deploy/temporal/dynamic-config.yaml as the dev server's `--dynamic-config-value` pairs (`KEY=JSON`). Each key has
 * one value and no constraints (the dev server has no place for them): anything else is an error, not a silent drop.
 */
function dynamicConfigValues(file = DYNAMIC_CONFIG_FILE) {
  const YAML = require('yaml');
  const doc = YAML.parse(fs.readFileSync(file, 'utf8')) || {};
  return Object.entries(doc).map(([key, entries]) => {
    const [only, ...more] = Array.isArray(entries) ? entries : [];
    const constrained = only && only.constraints && Object.keys(only.constraints).length > 0;
    if (!only || !('value' in only) || more.length || constrained) {
      throw new Error(`${path.relative(ROOT, file)}: ${key} must be one "- value: ..." without constraints`);
    }
    return `${key}=${JSON.stringify(only.value)}`;
  });
}

/** `{ CustomerId: 'Keyword', ... }` from workflows/search-attributes.ts (the single source of truth). */
function loadSearchAttributes() {
  if (cachedAttributes) return cachedAttributes;
  try {
    const { require: tsxRequire } = require('tsx/cjs/api');
    const mod = tsxRequire(SEARCH_ATTRIBUTES_FILE, __filename);
    if (mod && mod.SEARCH_ATTRIBUTES && Object.keys(mod.SEARCH_ATTRIBUTES).length) {
      cachedAttributes = { ...mod.SEARCH_ATTRIBUTES };
      return cachedAttributes;
    }
  } catch {
    // fall through to a plain parse of the source
  }
  try {
    const src = fs.readFileSync(SEARCH_ATTRIBUTES_FILE, 'utf8');
    const block = /SEARCH_ATTRIBUTES[^=]*=\s*\{([^}]*)\}/.exec(src);
    if (block) {
      const parsed = {};
      for (const m of block[1].matchAll(/['"]?(\w+)['"]?\s*:\s*['"](\w+)['"]/g)) parsed[m[1]] = m[2];
      if (Object.keys(parsed).length) {
        cachedAttributes = parsed;
        return cachedAttributes;
      }
    }
  } catch {
    // fall through to the constant
  }
  cachedAttributes = { ...FALLBACK_SEARCH_ATTRIBUTES };
  return cachedAttributes;
}

function splitAddress(address) {
  const m = /^(.*):(\d+)$/.exec(address);
  if (!m) return { host: address, port: 7233 };
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

async function connect(address, timeoutMs = 5000) {
  const { Connection } = require('@temporalio/client');
  return Connection.connect({ address, connectTimeout: timeoutMs });
}

/**
 * Resolves once the Temporal frontend at `address` answers DescribeNamespace for `namespace`; rejects after
 * timeoutMs with the last error, or as soon as `abort()` returns a reason.
 */
async function waitForTemporal(address, namespace = 'default', timeoutMs = 60000, abort) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    const reason = abort && abort();
    if (reason) throw new Error(`Temporal at ${address} did not come up: ${reason}`);
    let connection;
    try {
      const attemptMs = Math.min(5000, Math.max(1000, deadline - Date.now()));
      connection = await connect(address, attemptMs);
      // Bounded, so that something on the port that never answers (not a Temporal server) is asked again, and
      // `abort` looked at, instead of waited on.
      await connection.withDeadline(Date.now() + attemptMs, () =>
        connection.workflowService.describeNamespace({ namespace }),
      );
      return;
    } catch (err) {
      lastError = err;
    } finally {
      if (connection) await connection.close().catch(() => {});
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Temporal at ${address} (namespace "${namespace}") did not answer within ${timeoutMs} ms: ` +
          `${lastError ? lastError.message : 'no answer'}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

// describeTaskQueue's TaskQueueType: a queue served for workflows has workflow pollers; the rails' queue, which runs
// provider calls only, has activity pollers alone.
const WORKFLOW_POLLERS = 1; // TASK_QUEUE_TYPE_WORKFLOW
const ACTIVITY_POLLERS = 2; // TASK_QUEUE_TYPE_ACTIVITY

/**
 * Resolves once some worker polls `taskQueue` for workflow tasks (or activity tasks, with ACTIVITY_POLLERS):
 * DescribeTaskQueue lists a poller; rejects after timeoutMs, or as soon as `abort()` returns a reason.
 */
async function waitForWorker(address, namespace, taskQueue, timeoutMs = 60000, abort, pollerType = WORKFLOW_POLLERS) {
  const deadline = Date.now() + timeoutMs;
  const connection = await connect(address);
  try {
    for (;;) {
      const reason = abort && abort();
      if (reason) throw new Error(`No worker polled task queue ${taskQueue}: ${reason}`);
      try {
        const res = await connection.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: taskQueue, kind: 1 /* TASK_QUEUE_KIND_NORMAL */ },
          taskQueueType: pollerType,
        });
        if (res.pollers && res.pollers.length) return;
      } catch {
        // not there yet
      }
      if (Date.now() > deadline) throw new Error(`No worker polled task queue ${taskQueue} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await connection.close().catch(() => {});
  }
}

/**
 * Registers the search attributes of workflows/search-attributes.ts on an external server where they are missing
 * (operator service ListSearchAttributes / AddSearchAttributes). Returns the names it added.
 */
async function ensureSearchAttributes(address, namespace = 'default', options = {}) {
  const log = options.log || ((msg) => console.log(msg));
  const wanted = loadSearchAttributes();
  const connection = await connect(address);
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    const existing = new Map([
      ...Object.entries(listed.systemAttributes || {}),
      ...Object.entries(listed.customAttributes || {}),
    ]);
    const missing = {};
    for (const [name, type] of Object.entries(wanted)) {
      const want = INDEXED_VALUE_TYPE[type];
      if (want === undefined) throw new Error(`Unknown search attribute type ${type} for ${name}`);
      if (!existing.has(name)) {
        missing[name] = want;
      } else if (Number(existing.get(name)) !== want) {
        log(
          `Warning: search attribute ${name} exists on ${address} with another type (${existing.get(name)}); ` +
            `Cambio expects ${type}`,
        );
      }
    }
    const names = Object.keys(missing);
    if (!names.length) return [];
    log(`Registering search attributes on ${address} (namespace ${namespace}): ${names.join(', ')}`);
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    } catch (err) {
      // Someone else registered them between our list and add.
      if (err && err.code === GRPC_ALREADY_EXISTS) return [];
      throw new Error(
        `Could not register search attributes ${names.join(', ')} on ${address}: ${err.message}. Register them ` +
          `yourself: ${names
            .map(
              (n) =>
                `temporal operator search-attribute create --address ${address} ` +
                `--namespace ${namespace} --name ${n} --type ${wanted[n]}`,
            )
            .join(' ; ')}`,
        { cause: err },
      );
    }
    return names;
  } finally {
    await connection.close().catch(() => {});
  }
}

/**
 * Starts `temporal server start-dev` on 127.0.0.1 with the search attributes registered.
 * Options: temporal (binary path, required), dbFile (persist there; omitted = in memory), port / uiPort (default:
 * 7233 / 8233 when free, otherwise free ports), headless (no Web UI), namespace, logLevel (server log level,
 * default warn), quiet (drop the server's stdout banner), metricsPort (the server's Prometheus metrics there; the
 * benches read them), log, onChild(child) (called at spawn, so a caller can stop a server that is still starting).
 * Resolves `{ address, uiUrl, child, stop() }` once the frontend answers for the namespace. Rejects with
 * `serverExited: true` when the server exited while starting (a port taken, a bad flag), false when it did not answer.
 */
async function startDevServer(options) {
  const { temporal, dbFile, headless = false, namespace = 'default', logLevel = 'warn', quiet = false } = options;
  const log = options.log || ((msg) => console.log(msg));
  const host = '127.0.0.1';
  const port = options.port || (await preferredOrFreePort(7233, host));
  const uiPort = headless ? undefined : options.uiPort || (await preferredOrFreePort(port === 7233 ? 8233 : 0, host));
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(port),
    '--namespace',
    namespace,
    '--log-level',
    logLevel,
  ];
  if (options.metricsPort) args.push('--metrics-port', String(options.metricsPort));
  if (headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (dbFile) {
    fs.mkdirSync(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile);
    for (const pragma of STATE_FILE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  }
  for (const [name, type] of Object.entries(loadSearchAttributes())) args.push('--search-attribute', `${name}=${type}`);
  for (const setting of dynamicConfigValues()) args.push('--dynamic-config-value', setting);

  const shownDbFile = dbFile && dbFile.startsWith(ROOT + path.sep) ? path.relative(ROOT, dbFile) : dbFile;
  const state = dbFile ? ` (state in ${shownDbFile})` : ' (in memory)';
  log(`Starting Temporal dev server on ${host}:${port}${state}`);
  const child = spawnChild('temporal', temporal, args, { cwd: ROOT, quietAfterStop: true, quietStdout: quiet });
  if (options.onChild) options.onChild(child);
  const address = `${host}:${port}`;
  let exitInfo;
  const abort = () => (exitInfo ? `temporal server start-dev exited (${describeExit(exitInfo)})` : undefined);
  // The server's exit ends the wait at once, even while something else on the port keeps it from answering.
  const exited = child.exited.then((info) => {
    exitInfo = info;
    throw new Error(abort());
  });
  exited.catch(() => undefined); // a server stopped after it started: nobody waits any more
  try {
    const answering = (async () => {
      await waitForPort(host, port, 60000, abort);
      await waitForTemporal(address, namespace, 60000, abort);
    })();
    answering.catch(() => undefined); // the wait that lost to the exit settles later, unobserved
    await Promise.race([exited, answering]);
  } catch (err) {
    // Read before the stop below, which makes the server exit too.
    const serverExited = exitInfo !== undefined;
    await child.stop(5000);
    const hint = dbFile ? ` If its state file is damaged, delete ${dbFile} to start over.` : '';
    throw Object.assign(new Error(`${err.message}.${hint}`, { cause: err }), { serverExited });
  }
  return {
    address,
    uiUrl: uiPort ? `http://${host}:${uiPort}` : undefined,
    child,
    stop: (timeoutMs = 10000) => child.stop(timeoutMs),
  };
}

/** How many times `temporalForRun` starts its dev server when one exits while starting. */
const DEV_SERVER_START_ATTEMPTS = 5;

/**
 * Temporal for a run that must not touch anything else (tests, benchmarks): the server at TEMPORAL_ADDRESS,
 * made ready with our search attributes, or else an in-memory, headless dev server on a free port.
 * Returns `{ address, child, metricsUrl }` (child: the dev server we started, if any; metricsUrl: its Prometheus
 * metrics, when `metricsPort` asked for them and the server is ours); `onChild` receives that process as soon as it
 * is spawned, so a caller interrupted mid-start can still stop it.
 */
async function temporalForRun({ temporal, namespace, log, onChild, metricsPort }) {
  const external = process.env.TEMPORAL_ADDRESS;
  if (external) {
    log(`Temporal: external server at ${external}`);
    await waitForTemporal(external, namespace, 60000);
    await ensureSearchAttributes(external, namespace, { log });
    return { address: external, child: undefined };
  }
  const { ensureTemporalBinaries, freePort } = require('./temporal-binary');
  const binary = temporal || ensureTemporalBinaries({ log }).temporal;
  let server;
  for (let attempt = 1; !server; attempt++) {
    try {
      server = await startDevServer({
        temporal: binary,
        port: await freePort(),
        headless: true,
        namespace,
        logLevel: 'error',
        quiet: true,
        metricsPort,
        log,
        onChild,
      });
    } catch (err) {
      // A port found free can be taken before the server binds it: a dev server starting beside this one (the test
      // shards start theirs at once) binds its internal services to ports of its own choosing. Such a server exits
      // at once, so one that exited while starting is started again on another port.
      if (!err.serverExited || attempt >= DEV_SERVER_START_ATTEMPTS) throw err;
      log(`Temporal dev server exited while starting (${err.message}); starting it again on another port`);
    }
  }
  return {
    address: server.address,
    child: server.child,
    metricsUrl: metricsPort ? `http://127.0.0.1:${metricsPort}/metrics` : undefined,
  };
}

module.exports = {
  temporalForRun,
  startDevServer,
  ensureSearchAttributes,
  waitForTemporal,
  waitForWorker,
  ACTIVITY_POLLERS,
  loadSearchAttributes,
  splitAddress,
  dynamicConfigValues,
  DYNAMIC_CONFIG_FILE,
};
