// npm run bench:statement-neighbours — does a customer writing statements slow another's requests? (decisions 0357,
// 0359). A dedicated database (cambio_bench_neighbours, dropped afterwards), the API with its production flags:
// BENCH_FLOODERS (3) customers with BENCH_ENTRIES (2,000) seeded postings each, and a quiet customer. Each phase: the
// flooders (none, one, or all; BENCH_CLIENTS (16) clients each) loop their statement in one format, reading every
// byte, while the quiet customer times BENCH_QUIET_REQUESTS (100) sequential `GET /api/accounts`. Printed per phase:
// the quiet customer's p50, p90, p99 and non-200s, its p50 as a ratio to the phase without flooders (the ceiling,
// measured in the same run), and the flooders' statements written per second and refusals (429/503).
import { Client } from 'pg';
import { activeAccount, newCustomer, type BenchCustomer } from './lib/cambio';
import { now, sleep, stats } from './lib/load';
import { fmt, table } from './lib/report';
import { seedPostings } from './lib/seed-postings';
import { log, withStack } from './lib/stack';

const FLOODERS = Number(process.env.BENCH_FLOODERS || 3);
const ENTRIES = Number(process.env.BENCH_ENTRIES || 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS || 16);
const QUIET_REQUESTS = Number(process.env.BENCH_QUIET_REQUESTS || 100);

interface Flooder {
  c: BenchCustomer;
  accountId: string;
}

void withStack({ database: 'cambio_bench_neighbours', worker: true, api: true }, async (stack) => {
  const db = new Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const flooders: Flooder[] = [];
  for (let i = 0; i < FLOODERS; i++) {
    const c = await newCustomer(stack.databaseUrl, stack.apiUrl, `Bench Flooder ${i} Ltda`, CLIENTS);
    const accountId = await activeAccount(c, ['BRL']);
    await seedPostings(db, accountId, c.customerId, ENTRIES);
    flooders.push({ c, accountId });
  }
  await db.query('analyze ledger_entries; analyze ledger_transactions');
  await db.end();
  const quiet = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Quiet Ltda');
  const since = new Date(Date.now() - 2 * 86_400_000).toISOString();
  const period = () => `periodStart=${since}&periodEnd=${new Date().toISOString()}`;
  const headers = (c: BenchCustomer) => ({ Authorization: `Bearer ${c.token}` });

  /** One phase: `flooding` customers loop `format` statements while the quiet customer times its reads. */
  const phase = async (flooding: Flooder[], format: string) => {
    let running = true;
    let written = 0;
    let refused = 0;
    const started = now();
    const floods = flooding.flatMap((f) =>
      Array.from({ length: CLIENTS }, async () => {
        const path = `/api/accounts/${f.accountId}/statement?asset=BRL&${period()}&format=${format}`;
        while (running) {
          const res = await fetch(`${stack.apiUrl}${path}`, { headers: headers(f.c) }).catch(() => undefined);
          await res?.arrayBuffer().catch(() => undefined);
          if (res?.status === 200) written++;
          else {
            refused++;
            await sleep(Number(res?.headers.get('retry-after') ?? 1) * 1000);
          }
        }
      }),
    );
    if (flooding.length > 0) await sleep(2000); // the flood at its pace before the quiet customer is timed
    const times: number[] = [];
    let failed = 0;
    for (let i = 0; i < QUIET_REQUESTS; i++) {
      const t0 = now();
      const res = await fetch(`${stack.apiUrl}/api/accounts`, { headers: headers(quiet) }).catch(() => undefined);
      await res?.arrayBuffer().catch(() => undefined);
      times.push(now() - t0);
      if (res?.status !== 200) failed++;
    }
    running = false;
    await Promise.all(floods);
    stack.assertAlive();
    return { quiet: stats(times), failed, written, refused, seconds: (now() - started) / 1000 };
  };

  const rows: Array<Array<string | number>> = [];
  const alone = await phase([], 'json');
  const row = (name: string, r: Awaited<ReturnType<typeof phase>>) =>
    rows.push([
      name,
      fmt(r.quiet.p50),
      fmt(r.quiet.p90),
      fmt(r.quiet.p99),
      r.failed,
      `${fmt(r.quiet.p50 / alone.quiet.p50, 2)}x`,
      r.written ? fmt(r.written / r.seconds) : '-',
      r.refused,
    ]);
  row('alone (ceiling)', alone);
  for (const format of ['json', 'pdf']) {
    for (const n of [1, FLOODERS]) {
      log(`${n} flooder(s), ${format}`);
      row(`${n} flooder(s), ${format}`, await phase(flooders.slice(0, n), format));
    }
  }
  const headings = ['phase', 'quiet p50 ms', 'p90', 'p99', 'non-200', 'p50 vs alone', 'statements/s', 'refused'];
  console.log(table(headings, rows));
  for (const f of [...flooders.map((x) => x.c), quiet]) f.http.close();
});
