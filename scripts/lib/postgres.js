'use strict';
// Makes sure the Postgres server named by DATABASE_URL answers, starting the local cluster when it is down, and
// creates / drops throw-away databases for the test runner. Plain CommonJS; uses only `pg`.

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { Client } = require('pg');

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]', '']);

/** The URL with its password replaced by `***`, for messages. */
function redact(databaseUrl) {
  try {
    const u = new URL(databaseUrl);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return String(databaseUrl);
  }
}

/** Same server and credentials, another database. */
function withDatabase(databaseUrl, database) {
  const u = new URL(databaseUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

function databaseName(databaseUrl) {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'postgres';
}

function isLocal(databaseUrl) {
  const u = new URL(databaseUrl);
  // A unix-socket URL (postgres:///db?host=/var/run/postgresql) is local too.
  return LOCAL_HOSTS.has(u.hostname) || (u.searchParams.get('host') || '').startsWith('/');
}

function quoteIdent(name) {
  return `"${String(name).replace(/"/g, '""')}"`;
}

/** Connects to the server's `postgres` maintenance database; returns null on success or the Error. */
async function probe(databaseUrl) {
  const client = new Client({
    connectionString: withDatabase(databaseUrl, 'postgres'),
    connectionTimeoutMillis: 3000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The server answered but refused us (bad password, unknown role ...): starting a cluster will not help. */
function isRefusedByServer(err) {
  return Boolean(err && typeof err.code === 'string' && /^(28|3D|42|53)/.test(err.code));
}

/** Debian clusters `{ version, name, port }`: from pg_lsclusters, else one `main` per /etc/postgresql/<version>. */
function localClusters() {
  const ls = spawnSync('pg_lsclusters', ['-h'], { encoding: 'utf8' });
  if (!ls.error && ls.status === 0) {
    const clusters = ls.stdout
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f.length >= 3 && /^\d/.test(f[0]))
      .map(([version, name, port]) => ({ version, name, port: Number(port) }));
    if (clusters.length) return clusters;
  }
  try {
    return fs
      .readdirSync('/etc/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => ({ version, name: 'main', port: undefined }));
  } catch {
    return [];
  }
}

/**
 * Resolves when the Postgres server in databaseUrl accepts connections. When it does not and the host is local,
 * starts the Debian cluster (`pg_ctlcluster --skip-systemctl-redirect <version> main start`) and waits for it.
 * Otherwise rejects with a message naming the URL (password redacted).
 */
async function ensurePostgres(databaseUrl, options = {}) {
  const log = options.log || ((msg) => console.log(msg));
  const timeoutMs = options.timeoutMs || 30000;
  const shown = redact(withDatabase(databaseUrl, 'postgres'));

  let err = await probe(databaseUrl);
  if (!err) return;
  if (isRefusedByServer(err)) {
    throw new Error(
      `Postgres at ${shown} refused the connection: ${err.message} (DATABASE_URL=${redact(databaseUrl)})`,
    );
  }
  if (!isLocal(databaseUrl)) {
    throw new Error(
      `Postgres at ${shown} does not accept connections (${err.message}). Start it, or set DATABASE_URL to a ` +
        'reachable server (e.g. postgres://postgres@127.0.0.1:5432/cambio).',
    );
  }

  const wantedPort = Number(new URL(databaseUrl).port || 5432);
  const clusters = localClusters();
  const cluster =
    clusters.find((c) => c.port === wantedPort && c.name === 'main') ||
    clusters.find((c) => c.port === wantedPort) ||
    clusters.find((c) => c.port === undefined);
  if (!cluster) {
    const known = clusters.map((c) => `${c.version}/${c.name} on port ${c.port}`).join(', ');
    throw new Error(
      `Postgres at ${shown} does not accept connections (${err.message}) and no local cluster ` +
        `${known ? `uses port ${wantedPort} (found: ${known})` : 'was found under /etc/postgresql'} to start. ` +
        'Start Postgres yourself, or set DATABASE_URL to a reachable server.',
    );
  }
  const { version } = cluster;
  const args = ['--skip-systemctl-redirect', version, cluster.name, 'start'];
  log(`Postgres at ${shown} is not answering (${err.message}); starting it: pg_ctlcluster ${args.join(' ')}`);
  const r = spawnSync('pg_ctlcluster', args, { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const output = `${r.stdout || ''}${r.stderr || ''}`.trim();
    // Exit 2 means "already running": fall through and wait for it to accept connections.
    if (r.status !== 2) {
      throw new Error(
        `Postgres at ${shown} does not accept connections, and \`pg_ctlcluster ${args.join(' ')}\` failed ` +
          `(${r.error ? r.error.message : `exit ${r.status}`}${output ? `: ${output}` : ''}). ` +
          'Start Postgres yourself, or set DATABASE_URL to a reachable server.',
      );
    }
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 500));
    err = await probe(databaseUrl);
    if (!err) {
      log(`Postgres ${version}/${cluster.name} is up`);
      return;
    }
  }
  throw new Error(
    `Started Postgres ${version}/${cluster.name} but ${shown} still does not accept connections: ${err.message}`,
  );
}

async function withAdminClient(databaseUrl, fn) {
  const client = new Client({ connectionString: withDatabase(databaseUrl, 'postgres'), connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** CREATE DATABASE <name of databaseUrl>. */
async function createDatabase(databaseUrl) {
  const name = databaseName(databaseUrl);
  await withAdminClient(databaseUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
}

/** How many sessions are connected to the database of databaseUrl (0 when it does not exist). */
async function sessionsOn(databaseUrl) {
  const name = databaseName(databaseUrl);
  return withAdminClient(databaseUrl, async (c) => {
    const { rows } = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    return rows[0].n;
  });
}

/** DROP DATABASE IF EXISTS <name of databaseUrl> WITH (FORCE): also ends sessions still connected to it. */
async function dropDatabase(databaseUrl) {
  const name = databaseName(databaseUrl);
  await withAdminClient(databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

module.exports = {
  ensurePostgres,
  createDatabase,
  dropDatabase,
  sessionsOn,
  databaseName,
  withDatabase,
  redact,
  isLocal,
  probe,
};
