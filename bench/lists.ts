// npm run bench:lists — GET /api/accounts over 1,000,000 accounts of ONE customer, seeded straight into
// Postgres (INSERT ... SELECT generate_series) in a dedicated database, cambio_bench_lists, dropped afterwards.
// Times page 1 and page 1000 (limit 10, default DESCENDING order, `total` included as always) with the filter
// currentState.status[eq]=ACTIVE, and without a filter, as the median of several sequential runs.
// Page 1000 is reached with a cursor computed directly: the position of row 9990 of the filtered, ordered set
// (the last row of page 999), encoded with encodeCursor (lists/cursor.ts) and the API's CURSOR_SECRET —
// and cross-checked against a walked cursor (page 2) and against SQL OFFSET (first row of page 1000).
// Target: page 1000 within 1.2x of page 1. Knobs: BENCH_ROWS (1000000), BENCH_RUNS (9).
import { Client } from 'pg';
import { loadConfig } from '../config';
import { encodeCursor } from '../lists/cursor';
import { parseFilters } from '../lists/filter-parser';
import { compileFilters } from '../db/lists/filter-sql';
import { ACCOUNT_FIELDS, ACCOUNT_LIST } from '../db/repositories/accounts';
import { cursorScope } from '../db/repositories/lists';
import { expectStatus } from './lib/http';
import { newCustomer } from './lib/cambio';
import { median, now } from './lib/load';
import { CpuMeter, postgresPids, rssOf, waitForQuiet } from './lib/proc';
import { log, Stack, withStack } from './lib/stack';
import { banner, cpuTable, fmt, ok, table } from './lib/report';
import { explainAnalyze, numbered } from './lib/explain';
import { seedAccounts } from './lib/seed-accounts';

// This bench measures how a page's cost grows with its depth, so every request reads its page: the API's copies of
// unchanged pages (LIST_CACHE_MB, db/lists/page-copies.ts) would answer the unfiltered repeats without a read.
process.env.LIST_CACHE_MB ??= '0';

const ROWS = Number(process.env.BENCH_ROWS || 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS || 9);
const LIMIT = 10;
const PAGE = 1000;
const FILTER = 'currentState.status[eq]=ACTIVE';

async function main(stack: Stack) {
  const secret = loadConfig().cursorSecret; // the API's: same environment (CURSOR_SECRET or the default)
  const customer = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Lists Ltda', 1);

  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  try {
    log(`seeding ${ROWS.toLocaleString('en')} accounts for customer ${customer.customerId}`);
    let t0 = now();
    await seedAccounts(pg, customer.customerId, ROWS);
    const seedMs = now() - t0;
    t0 = now();
    await pg.query('vacuum analyze accounts');
    log(`seeded in ${fmt(seedMs / 1000)} s, vacuum analyze ${fmt((now() - t0) / 1000)} s`);
    const counts = await pg.query(
      `select status, count(*)::int as n from accounts where customer_id = $1 group by status order by status`,
      [customer.customerId],
    );
    const tableSize = await pg.query(`select pg_size_pretty(pg_total_relation_size('accounts')) as size`);
    log(
      `rows by status: ${counts.rows.map((r) => `${r.status} ${r.n}`).join(', ')}; accounts table + ` +
        `indexes ${tableSize.rows[0].size}`,
    );

    // --- page 1000 cursors, computed from the data: the position of row (PAGE-1)*LIMIT (1-based), i.e. OFFSET 9989.
    const positionAt = async (offset: number, filtered: boolean) => {
      const res = await pg.query(
        `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at from accounts
         where customer_id = $1 ${filtered ? `and status = 'ACTIVE'` : ''}
           order by created_at desc, id desc offset $2 limit 1`,
        [customer.customerId, offset],
      );
      return res.rows[0] as { id: string; created_at: string };
    };
    const cursorAt = async (offset: number, filtered: boolean) => {
      const row = await positionAt(offset, filtered);
      const scope = cursorScope(customer.customerId, ACCOUNT_LIST);
      return encodeCursor({ createdAt: row.created_at, id: row.id, sortOrder: 'DESCENDING' }, secret, scope);
    };

    const path = (filtered: boolean, cursor?: string) => {
      const q = new URLSearchParams({ limit: String(LIMIT) });
      if (filtered) q.set('filters', FILTER);
      if (cursor) q.set('cursor', cursor);
      return `/api/accounts?${q}`;
    };
    const getPage = async (p: string) => expectStatus(await customer.http.get(p), 200, `GET ${p}`);

    // Cross-checks: a computed cursor lands where walking lands, and page 1000 starts at SQL OFFSET 9990.
    for (const filtered of [true, false]) {
      const page1 = await getPage(path(filtered));
      const walked2 = await getPage(path(filtered, page1.meta.nextCursor));
      const computed2 = await getPage(path(filtered, await cursorAt(LIMIT - 1, filtered)));
      const same =
        JSON.stringify(walked2.data.map((a: { id: string }) => a.id)) ===
        JSON.stringify(computed2.data.map((a: { id: string }) => a.id));
      if (!same)
        throw new Error(
          `computed cursor for page 2 (${filtered ? 'filtered' : 'unfiltered'}) does not match the walked one`,
        );
      const p1000 = await getPage(path(filtered, await cursorAt((PAGE - 1) * LIMIT - 1, filtered)));
      const expected = await positionAt((PAGE - 1) * LIMIT, filtered);
      if (p1000.data[0]?.id !== expected.id)
        throw new Error(`page ${PAGE} starts at ${p1000.data[0]?.id}, SQL OFFSET says ${expected.id}`);
      if (filtered && p1000.data.some((a: { currentState: { status: string } }) => a.currentState.status !== 'ACTIVE'))
        throw new Error('filter leaked');
    }
    log('cursor cross-checks passed (computed page-2 cursor = walked cursor; page 1000 first row = SQL OFFSET 9990)');

    // --- timings
    const cases = [
      { name: `filtered (${FILTER}), page 1`, filtered: true, page: 1 },
      { name: `filtered (${FILTER}), page ${PAGE}`, filtered: true, page: PAGE },
      { name: 'no filter, page 1', filtered: false, page: 1 },
      { name: `no filter, page ${PAGE}`, filtered: false, page: PAGE },
    ];
    const meter = new CpuMeter({
      api: () => [stack.api!.proc.pid!],
      postgres: () => postgresPids([stack.databaseName]),
    });
    // Rounds interleave the cases (page 1, page 1000, ...), so drift from other tenants of the machine hits
    // every case alike; each round first waits (briefly) for a quiet machine. The first two rounds are warm-up.
    const paths = await Promise.all(
      cases.map(async (c) =>
        path(c.filtered, c.page === 1 ? undefined : await cursorAt((c.page - 1) * LIMIT - 1, c.filtered)),
      ),
    );
    const results = cases.map((c) => ({ name: c.name, ms: [] as number[], total: 0, rows: 0 }));
    let noisyRounds = 0;
    for (let round = 0; round < RUNS + 2; round++) {
      if ((await waitForQuiet(25, 10000)) >= 25) noisyRounds++;
      if (round === 2) meter.start();
      for (let k = 0; k < cases.length; k++) {
        const t = now();
        const page = await getPage(paths[k]);
        if (round >= 2) results[k].ms.push(now() - t);
        results[k].total = page.meta.total;
        results[k].rows = page.data.length;
      }
    }
    if (noisyRounds) log(`${noisyRounds} of ${RUNS + 2} rounds started on a busy machine (other tenants)`);
    const cpu = meter.stop();

    // --- where the time goes, database side: the two parts of runList's one statement (rows and total) for filtered
    // page 1000, explained each on its own.
    const filter = compileFilters(parseFilters(FILTER), ACCOUNT_FIELDS);
    const cursor1000 = await positionAt((PAGE - 1) * LIMIT - 1, true);
    const base = `from accounts a where a.customer_id = ? and (true) and ${filter.sql}`;
    const pageSql = numbered(
      `select a.* ${base} and (a.created_at, a.id) < (?::timestamptz, ?) order by a.created_at DESC, a.id DESC limit ?`,
    );
    const countSql = numbered(`select count(*)::int as total ${base}`);
    const explain = (sql: string, params: unknown[]) => explainAnalyze(pg, sql, params);
    const pageExplain = await explain(pageSql, [
      customer.customerId,
      ...filter.params,
      cursor1000.created_at,
      cursor1000.id,
      LIMIT + 1,
    ]);
    const page1Explain = await explain(numbered(`select a.* ${base} order by a.created_at DESC, a.id DESC limit ?`), [
      customer.customerId,
      ...filter.params,
      LIMIT + 1,
    ]);
    const countExplain = await explain(countSql, [customer.customerId, ...filter.params]);

    // --- report
    banner(
      `bench:lists — GET /api/accounts, ${ROWS.toLocaleString('en')} accounts of one customer, ` +
        `limit ${LIMIT}, median of ${RUNS} runs`,
    );
    console.log(
      table(
        ['case', 'median ms', 'min ms', 'max ms', 'rows', 'total'],
        results.map((r) => [
          r.name,
          median(r.ms),
          Math.min(...r.ms),
          Math.max(...r.ms),
          String(r.rows),
          String(r.total),
        ]),
      ),
    );
    const ratio = median(results[1].ms) / median(results[0].ms);
    const ratioUnfiltered = median(results[3].ms) / median(results[2].ms);
    console.log('');
    console.log(
      table(
        ['target', 'measured', 'goal', ''],
        [
          [`filtered page ${PAGE} / page 1`, `${fmt(ratio, 2)}x`, '<= 1.20x', ok(ratio <= 1.2)],
          [`(info) unfiltered page ${PAGE} / page 1`, `${fmt(ratioUnfiltered, 2)}x`, '', ''],
        ],
      ),
    );
    console.log(
      '\nDatabase side, filtered (EXPLAIN ANALYZE of the two parts of the one statement runList runs per ' +
        'request, the rows and the total, each on its own):',
    );
    console.log(
      table(
        ['statement', 'exec ms', 'plan'],
        [
          ['page 1 rows (limit 11)', fmt(page1Explain.ms, 3), page1Explain.node],
          [`page ${PAGE} rows (keyset, limit 11)`, fmt(pageExplain.ms, 3), pageExplain.node],
          ['total (count(*))', fmt(countExplain.ms, 3), countExplain.node],
        ],
      ),
    );
    console.log(`\nAPI RSS after the run: ${fmt(rssOf(stack.api!.proc.pid)?.rssMb ?? NaN)} MB`);
    const timed = RUNS * cases.length;
    console.log(
      `\nCPU over the timed rounds (wall includes the quiet-machine waits; per request: ${cpu.groups
        .map((g) => `${g.name} ${fmt((1000 * g.cpuSeconds) / timed)} ms`)
        .join(', ')}):`,
    );
    console.log(cpuTable(cpu));
    log(
      'page 1000 reached with a computed cursor (row 9990 of the ordered set, encodeCursor + ' +
        'CURSOR_SECRET), cross-checked against walking and SQL OFFSET',
    );
  } finally {
    await pg.end();
    customer.http.close();
  }
}

void withStack({ database: 'cambio_bench_lists', worker: false, api: true }, main);
