#!/usr/bin/env node
'use strict';
// `npm test`: unit and integration tests against real services, nothing shared with `npm start`.
//   Postgres of DATABASE_URL (started if local and down) → a fresh database cambio_test_<pid>_<time> →
//   Temporal (TEMPORAL_ADDRESS, or an in-memory dev server on free ports), with `npm run build`, the type
//   check and (whole suite only) the steps of `npm run lint` beside them → mocha → dev server stopped and the
//   database dropped. Exit code: mocha's. Extra arguments go to mocha:
//   `npm test -- --grep quotes`, `npm test -- test/unit/money.test.ts` (explicit files replace the default globs).
// The last line of output reads `N passed, N failed`; in a sharded run, each failed test's `failed: …` line comes
// just before it.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { StringDecoder } = require('node:string_decoder');
const { ensureTemporalBinaries, ROOT } = require('./lib/temporal-binary');
const { ensurePostgres, createDatabase, dropDatabase, withDatabase, databaseName, redact } = require('./lib/postgres');
const { temporalForRun } = require('./lib/temporal-server');
const { splitIntoShards, takeShardTimes, writeFileTimes } = require('./lib/shards');
const { namesSpecs: namesSpecsUnder } = require('./lib/named-specs');

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/cambio';
const DEFAULT_SPECS = ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'];
const MOCHA_BIN = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const REPORTER = path.join(__dirname, 'lib', 'mocha-summary-reporter.js');
const SUMMARY_LINE = /^\d+ passed, \d+ failed$/;
// Each spec file's seconds in a whole green run, which weigh the shards (decision 0152). Refreshed by
// `CAMBIO_TEST_RECORD_TIMES=1 npm test`; a file it does not name is weighed by its size.
const FILE_TIMES = path.join(ROOT, 'test', 'file-times.json');
// What the type check of the last run learnt (decision 0148): the next run in this checkout checks again only the
// files that changed and those that depend on them, as the build does with dist/.tsbuildinfo. A fresh checkout
// (CI after `npm ci`) has none and checks the whole tree.
const TYPE_CHECK_INFO = path.join(ROOT, 'node_modules', '.cache', 'cambio', 'type-check.tsbuildinfo');

// A closed pipe (`npm test | head`) must not kill us before we clean up.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

const log = (msg) => console.error(`[test] ${msg}`);

const devServers = []; // each shard's dev server child process, known from the moment it is spawned
const checking = new Set(); // the checks still running (type check, lint), stopped if we end before them
const testDatabaseUrls = []; // each shard's database
const mochas = new Set(); // the mocha processes still running
let interrupted = false;

let cleaning;
/** Stops the dev server and drops the test database; every caller awaits the same single run. */
function cleanup() {
  cleaning ??= (async () => {
    for (const child of checking) child.kill('SIGTERM');
    await Promise.all(devServers.map((server) => server.stop(10000)));
    for (const url of testDatabaseUrls) {
      await dropDatabase(url).catch((err) => log(`could not drop database ${databaseName(url)}: ${err.message}`));
    }
  })();
  return cleaning;
}

// Ctrl-C reaches every process of the terminal's group and npm forwards it once more: repeats within a second
// are the same request; a later one exits at once.
let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (interrupted) {
      if (Date.now() - firstSignalAt >= 1000) process.exit(130);
      return;
    }
    interrupted = true;
    firstSignalAt = Date.now();
    log(`${signal} received; cleaning up`);
    for (const child of mochas) if (child.exitCode === null) child.kill('SIGTERM');
    cleanup().finally(() => process.exit(130));
  });
}

const namesSpecs = (extra) => namesSpecsUnder(ROOT, extra);

/**
 * A check run beside the rest, its output held back and printed whole when it ends, so that it does not interleave
 * with the build's and the servers' lines. Resolves true when it passed.
 */
function check(label, command, args) {
  log(`${label} (beside the build and the servers' start)`);
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    checking.add(child);
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (err) => {
      log(`could not run ${label}: ${err.message}`);
      resolve(false);
    });
    child.on('close', (code) => {
      checking.delete(child);
      const text = Buffer.concat(output).toString('utf8');
      if (text.trim()) process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
      log(`${label}: ${code === 0 ? 'passed' : 'FAILED'}`);
      resolve(code === 0);
    });
  });
}

/**
 * The steps of `npm run lint` (package.json's script, `prettier --check . && eslint .`, stays their one definition),
 * each to run as a check of its own: the formatting check then runs beside the lint's longest step, not before it.
 */
function lintSteps() {
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.lint;
  return script.split('&&').map((step) => step.trim());
}

/**
 * The checks before mocha, run at once and beside the build and the start of Postgres and Temporal (decisions
 * 0139, 0148): each is one single-threaded process, so on two cores running them side by side saves most of the
 * shorter ones' time. The type check of the whole tree (tests included) runs on every run, incremental
 * (TYPE_CHECK_INFO); the steps of `npm run lint` on the whole suite only: CI runs `npm test` (.ci/run), so it cannot
 * skip them, and a run of named spec files, the edit-and-rerun loop, skips them. Resolves true when every check
 * passed.
 */
function checks(extra) {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const typeCheck = ['-p', 'tsconfig.json', '--noEmit', '--incremental', '--tsBuildInfoFile', TYPE_CHECK_INFO];
  // Each step is a project tool and its arguments (`eslint .`), run from node_modules/.bin as `npm run` finds it;
  // without a shell between, so that stopping the checks stops the tool itself.
  const tool = (name) => path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);
  return Promise.all([
    check(`type check (tsc ${typeCheck.slice(0, 3).join(' ')} --incremental)`, process.execPath, [tsc, ...typeCheck]),
    ...(namesSpecs(extra) ? [] : lintSteps()).map((step) => {
      const [name, ...args] = step.split(/\s+/);
      return check(`lint: ${step}`, tool(name), args);
    }),
  ]).then((passed) => passed.every(Boolean));
}

/**
 * `npm run build` beside the start of Postgres and Temporal: the API, worker, simulator and CLI processes the tests
 * spawn run from dist/, as a deployment runs them, and start in about half the time tsx takes
 * (test/helpers/entries.ts). Incremental: seconds when little changed. Resolves true when it built.
 */
function build() {
  log('npm run build (the processes tests spawn run dist/)');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'build.js')], { cwd: ROOT, stdio: 'inherit' });
    child.on('error', (err) => {
      log(`could not run the build: ${err.message}`);
      resolve(false);
    });
    child.on('close', (code) => resolve(code === 0));
  });
}

/** Mocha arguments: `specs` (the default globs, or a shard's files) unless the caller named spec files. */
function mochaArgs(extra, specs = DEFAULT_SPECS) {
  const choosesReporter = extra.some((a) => a === '-R' || a === '--reporter' || a.startsWith('--reporter='));
  const choosesColor = extra.some((a) => /^--(no-)?colou?rs?$|^-c$|^-C$/.test(a));
  return [
    ...(namesSpecs(extra) ? [] : specs),
    ...(choosesReporter ? [] : ['--reporter', REPORTER]),
    ...(!choosesColor && process.stdout.isTTY ? ['--color'] : []),
    ...extra,
  ];
}

/**
 * One mocha process. `live`: its output streams to ours as it comes; otherwise it is held and printed whole when it
 * ends, so that the shards' lines do not interleave. Resolves with its exit code and its closing counts.
 */
function runMocha(args, env, { live = true } = {}) {
  return new Promise((resolve) => {
    const decoder = new StringDecoder('utf8'); // a character split between two chunks stays whole
    let partial = ''; // the unfinished last line of what came so far
    let summary; // the closing `N passed, N failed` line, once it came
    const failedTests = [];
    // eslint-disable-next-line no-control-regex -- strips the colour codes (ESC [ ... m) mocha may print
    const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, '');
    const readLines = (text) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop();
      for (const line of lines.map(plain)) {
        if (line.startsWith('failed: ')) failedTests.push(line);
        else if (SUMMARY_LINE.test(line)) summary = line;
      }
    };
    const held = [];
    const child = spawn(process.execPath, [MOCHA_BIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ['inherit', 'pipe', 'inherit'],
    });
    mochas.add(child);
    child.stdout.on('data', (chunk) => {
      if (live) process.stdout.write(chunk);
      else held.push(chunk);
      readLines(decoder.write(chunk));
    });
    const done = (code, signal) => {
      mochas.delete(child);
      if (!live) process.stdout.write(Buffer.concat(held));
      readLines(`${decoder.end()}\n`);
      const [passed, failed] = summary ? summary.match(/\d+/g).map(Number) : [0, 0];
      resolve({ code, signal, sawSummary: !!summary, passed, failed, failedTests });
    };
    child.on('error', (err) => {
      log(`could not run mocha: ${err.message}`);
      done(1);
    });
    child.on('close', (code, signal) => done(code === null ? 1 : code, signal));
  });
}

/** Every file a glob of DEFAULT_SPECS names (`dir/**\/*.test.ts`), sorted. */
function specFiles(glob) {
  const [dir, suffix] = [glob.slice(0, glob.indexOf('/**')), glob.slice(glob.lastIndexOf('*') + 1)];
  const walk = (d) =>
    fs
      .readdirSync(path.join(ROOT, d), { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(`${d}/${e.name}`) : e.name.endsWith(suffix) ? [`${d}/${e.name}`] : []));
  return walk(dir).sort();
}

/**
 * The whole suite in `count` shards of about equal time (decisions 0149, 0152): the unit tests and some integration
 * files in the first, the rest in the others. Each shard is a run of its own (its database, its Temporal), as two
 * developers' runs on one machine are.
 */
function shards(count) {
  const [units, integration] = DEFAULT_SPECS.map(specFiles);
  const split = splitIntoShards({ root: ROOT, count, units, integration, timesFile: FILE_TIMES });
  return split.map((files, i) => [...(i === 0 ? [DEFAULT_SPECS[0]] : []), ...files]);
}

/** A shard's services: its Temporal dev server and its database, and the environment its mocha runs with. */
async function shardEnv(baseUrl, temporal, testServer, index) {
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
  // In memory, headless, on a free port: independent of a running `npm start` and of other test runs.
  const { address: temporalAddress } = await temporalForRun({
    temporal,
    namespace,
    log,
    onChild: (child) => devServers.push(child),
  });
  const databaseUrl = withDatabase(baseUrl, `cambio_test_${process.pid}_${Date.now()}_${index}`);
  testDatabaseUrls.push(databaseUrl);
  await createDatabase(databaseUrl);
  log(`Database ${redact(databaseUrl)} (dropped afterwards)`);
  // The API and worker processes that tests spawn log in as the application role (no DDL, no TRUNCATE, the audit
  // log append-only), as a deployment runs them; the in-process stack migrates as the owner and grants it.
  const appUrl = new URL(databaseUrl);
  appUrl.username = 'cambio_app_test';
  appUrl.password = 'cambio_app_test';
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    CAMBIO_TEST_APP_DATABASE_URL: appUrl.toString(),
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_TEST_SERVER_PATH: testServer,
    CI: process.env.CI || 'true',
    // test/helpers/entries.ts: spawned processes run the dist/ this run built.
    CAMBIO_TEST_DIST: '1',
  };
}

/**
 * With CAMBIO_TEST_RECORD_TIMES=1, a whole run (no mocha arguments) that passed writes its files' seconds to
 * FILE_TIMES. The shards' own files are removed either way.
 */
function recordTimes(results, files, extra) {
  const shardTimes = files.map(takeShardTimes);
  if (process.env.CAMBIO_TEST_RECORD_TIMES !== '1') return;
  const passed = results.every((r) => r.code === 0 && r.failed === 0);
  if (extra.length > 0 || !passed || shardTimes.includes(undefined)) {
    log(`the files' times were not recorded: only a whole run that passes writes ${path.relative(ROOT, FILE_TIMES)}`);
    return;
  }
  log(`recorded ${writeFileTimes(FILE_TIMES, shardTimes)} files' times in ${path.relative(ROOT, FILE_TIMES)}`);
}

async function main() {
  const extra = process.argv.slice(2);
  // Three shards side by side for the whole suite (decisions 0149, 0325); one for named files, or as
  // CAMBIO_TEST_SHARDS says.
  const shardCount = namesSpecs(extra) ? 1 : Math.max(1, Number(process.env.CAMBIO_TEST_SHARDS || 3));
  const checked = checks(extra);
  const built = build();
  const baseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  await ensurePostgres(baseUrl, { log });
  const { testServer, temporal } = ensureTemporalBinaries({ log });
  const envs = await Promise.all(
    Array.from({ length: shardCount }, (_, i) => shardEnv(baseUrl, temporal, testServer, i)),
  );
  if (interrupted) return 130;
  if (!(await built)) {
    log('the build failed (messages above)');
    console.log('0 passed, 1 failed');
    return 1;
  }
  if (!(await checked)) {
    log('a check failed: `npm run format` fixes the layout; the rest is in the messages above');
    console.log('0 passed, 1 failed');
    return 1;
  }
  const specs = shardCount === 1 ? [DEFAULT_SPECS] : shards(shardCount);
  if (shardCount > 1) log(`${shardCount} shards side by side; the first streams, the others print when they end`);
  // Each shard's reporter writes its files' seconds (scripts/lib/mocha-summary-reporter.js), for recordTimes.
  const timesOut = specs.map((_, i) => path.join(os.tmpdir(), `cambio-test-times-${process.pid}-${i}.json`));
  const shardEnvs = envs.map((env, i) => (shardCount > 1 ? { ...env, CAMBIO_TEST_TIMES_OUT: timesOut[i] } : env));
  const results = await Promise.all(
    specs.map((files, i) => runMocha(mochaArgs(extra, files), shardEnvs[i], { live: i === 0 })),
  );
  if (shardCount > 1) recordTimes(results, timesOut, extra);
  await cleanup();
  if (interrupted) return 130;
  const dead = results.find((r) => !r.sawSummary);
  if (dead) {
    // Mocha died before its reporter finished (a test file that does not compile, for one): say so plainly.
    log(`mocha exited (${dead.signal ? `signal ${dead.signal}` : `code ${dead.code}`}) before reporting results`);
    console.log('0 passed, 1 failed');
    return dead.code || 1;
  }
  if (shardCount > 1) {
    const sum = (key) => results.reduce((n, r) => n + r[key], 0);
    const failedTests = results.flatMap((r) => r.failedTests);
    if (failedTests.length > 0) console.log(`\n${failedTests.join('\n')}`);
    console.log(`${sum('passed')} passed, ${sum('failed')} failed`);
  }
  return results.reduce((code, r) => code || r.code, 0);
}

main().then(
  async (code) => {
    await cleanup();
    process.exit(interrupted ? 130 : code);
  },
  async (err) => {
    log(err && err.message ? err.message : String(err));
    await cleanup();
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
