// npm run bench:neighbours — does a customer flooding one kind of request slow another's requests? (decisions
// 0357, 0359, 0361, 0362). A dedicated database (cambio_bench_neighbours, dropped afterwards), the API with its
// production flags: BENCH_FLOODERS (3) customers, each seeded with what its floods read, and a quiet customer. Each
// phase: the flooders (one, then all; BENCH_CLIENTS (16) clients each, on a thread of their own) loop one kind of
// request, reading every byte, while the quiet customer times BENCH_QUIET_REQUESTS (100) sequential
// `GET /api/accounts` (a page of its own, with BENCH_QUIET=account `GET /api/accounts/{id}`: a read that is no
// page). BENCH_FLOODS picks the kinds (all by default):
// - statement-json, statement-pdf: the statement of an account with BENCH_ENTRIES (2,000) seeded postings;
// - account-list: `GET /api/accounts?limit=100` filtered on ACTIVE over BENCH_ACCOUNTS (100,000) seeded accounts
//   (half of them ACTIVE), its `total` included as always;
// - body-json: `POST /api/quotes` with a body of about 1 MiB (the limit) that is valid JSON, one long string in an
//   unknown property: read, decoded, scanned and parsed before the schema refuses it (400);
// - body-malformed: the same body cut short, so not JSON (400);
// - body-over-limit: 2 MiB without a Content-Length, read up to the limit, then 413 and the connection closed;
// - body-64k: bodies of 64 KiB, the largest that take no slot of the process (decision 0362), refused by the schema.
// Printed per phase: the quiet customer's p50, p90, p99 and non-200s, its p50 as a ratio to the phase without
// flooders (the ceiling, measured in the same run), and the flooders' requests answered per second and refusals
// (429/503); the API's and Postgres's CPU while the quiet customer was timed, in % of one core.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Client } from 'pg';
import { activeAccount, newCustomer, type BenchCustomer } from './lib/cambio';
import { now, sleep, stats } from './lib/load';
import { fmt, table } from './lib/report';
import { seedAccounts } from './lib/seed-accounts';
import { seedPostings } from './lib/seed-postings';
import { log, stackCpuMeter, withStack } from './lib/stack';

// The per-customer limits as deployed (250 requests/s, 8 in flight): what a flooder is held to is part of the measure.
process.env.BENCH_RATE_LIMIT ??= 'default';

const FLOODERS = Number(process.env.BENCH_FLOODERS || 3);
const ENTRIES = Number(process.env.BENCH_ENTRIES || 2000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS || 100_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS || 16);
const QUIET_REQUESTS = Number(process.env.BENCH_QUIET_REQUESTS || 100);
const QUIET_READS_ONE = process.env.BENCH_QUIET === 'account';

interface Flooder {
  c: BenchCustomer;
  accountId: string;
}

interface Flood {
  path: (f: Flooder) => string;
  /** A POST's body (bench/lib/flood-worker.mjs makes it); a read's flood has none. */
  body?: 'json' | 'malformed' | 'chunked' | 'json-64k';
  /** The status a served flooding request gets; any other is counted as refused. */
  served: number;
}

/** What one flooding request asks, per kind. */
const FLOOD_KINDS: Record<string, Flood> = {
  'statement-json': {
    path: (f) => `/api/accounts/${f.accountId}/statement?asset=BRL&${lastTwoDays()}&format=json`,
    served: 200,
  },
  'statement-pdf': {
    path: (f) => `/api/accounts/${f.accountId}/statement?asset=BRL&${lastTwoDays()}&format=pdf`,
    served: 200,
  },
  'account-list': {
    path: () => `/api/accounts?limit=100&filters=${encodeURIComponent('currentState.status[eq]=ACTIVE')}`,
    served: 200,
  },
  'body-json': { path: () => '/api/quotes', body: 'json', served: 400 },
  'body-malformed': { path: () => '/api/quotes', body: 'malformed', served: 400 },
  'body-over-limit': { path: () => '/api/quotes', body: 'chunked', served: 413 },
  'body-64k': { path: () => '/api/quotes', body: 'json-64k', served: 400 },
};

const FLOODS = (process.env.BENCH_FLOODS || Object.keys(FLOOD_KINDS).join(',')).split(',');

function lastTwoDays(): string {
  return `periodStart=${new Date(Date.now() - 2 * 86_400_000).toISOString()}&periodEnd=${new Date().toISOString()}`;
}

const unknown = FLOODS.filter((kind) => !FLOOD_KINDS[kind]);
if (unknown.length > 0) throw new Error(`BENCH_FLOODS: unknown ${unknown.join(', ')}`);

void withStack({ database: 'cambio_bench_neighbours', worker: true, api: true }, async (stack) => {
  const db = new Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const flooders: Flooder[] = [];
  for (let i = 0; i < FLOODERS; i++) {
    const c = await newCustomer(stack.databaseUrl, stack.apiUrl, `Bench Flooder ${i} Ltda`, CLIENTS);
    const accountId = await activeAccount(c, ['BRL']);
    if (FLOODS.some((kind) => kind.startsWith('statement-'))) await seedPostings(db, accountId, c.customerId, ENTRIES);
    if (FLOODS.includes('account-list')) await seedAccounts(db, c.customerId, ACCOUNTS);
    flooders.push({ c, accountId });
  }
  await db.query('analyze ledger_entries; analyze ledger_transactions');
  await db.query('vacuum analyze accounts');
  await db.end();
  const quiet = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Quiet Ltda');
  const quietPath = QUIET_READS_ONE ? `/api/accounts/${await activeAccount(quiet, ['BRL'])}` : '/api/accounts';
  const headers = (c: BenchCustomer) => ({ Authorization: `Bearer ${c.token}` });
  const meter = stackCpuMeter(stack);

  /** One phase: `flooding` customers loop reads of `kind` while the quiet customer times its own. */
  const phase = async (flooding: Flooder[], kind: string) => {
    const started = now();
    const flood = FLOOD_KINDS[kind];
    // On a thread of its own: the flood's bytes must not hold the event loop that times the quiet customer.
    const floods = new Worker(path.join(__dirname, 'lib', 'flood-worker.mjs'), {
      workerData: {
        requests: flooding.map((f) => ({ url: `${stack.apiUrl}${flood.path(f)}`, token: f.c.token })),
        clients: CLIENTS,
        method: flood.body ? 'POST' : 'GET',
        body: flood.body,
        served: flood.served,
      },
    });
    if (flooding.length > 0) await sleep(2000); // the flood at its pace before the quiet customer is timed
    const times: number[] = [];
    let failed = 0;
    meter.start();
    for (let i = 0; i < QUIET_REQUESTS; i++) {
      const t0 = now();
      const res = await fetch(`${stack.apiUrl}${quietPath}`, { headers: headers(quiet) }).catch(() => undefined);
      await res?.arrayBuffer().catch(() => undefined);
      times.push(now() - t0);
      if (res?.status !== 200) failed++;
    }
    const cpu = meter.stop();
    const { answered, refused } = await new Promise<{ answered: number; refused: number }>((resolve) => {
      floods.once('message', resolve);
      floods.postMessage('stop');
    });
    await floods.terminate();
    stack.assertAlive();
    const pctOf = (name: string) => cpu.groups.find((g) => g.name === name)?.pctOfCore ?? NaN;
    return {
      quiet: stats(times),
      failed,
      answered,
      refused,
      seconds: (now() - started) / 1000,
      api: pctOf('api'),
      postgres: pctOf('postgres'),
    };
  };

  const rows: Array<Array<string | number>> = [];
  const alone = await phase([], FLOODS[0]);
  const row = (name: string, r: Awaited<ReturnType<typeof phase>>) =>
    rows.push([
      name,
      fmt(r.quiet.p50),
      fmt(r.quiet.p90),
      fmt(r.quiet.p99),
      r.failed,
      `${fmt(r.quiet.p50 / alone.quiet.p50, 2)}x`,
      r.answered ? fmt(r.answered / r.seconds) : '-',
      r.refused,
      fmt(r.api),
      fmt(r.postgres),
    ]);
  row('alone (ceiling)', alone);
  for (const kind of FLOODS) {
    for (const n of [1, FLOODERS]) {
      log(`${n} flooder(s), ${kind}`);
      row(`${n} flooder(s), ${kind}`, await phase(flooders.slice(0, n), kind));
    }
  }
  const headings = ['phase', 'quiet p50 ms', 'p90', 'p99', 'non-200', 'p50 vs alone', 'answered/s', 'refused'];
  headings.push('API %core', 'Postgres %core');
  console.log(table(headings, rows));
  for (const f of [...flooders.map((x) => x.c), quiet]) f.http.close();
});
