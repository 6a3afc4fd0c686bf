// npm run bench:statements — balances at an instant, statements and issuing, at scale, in a dedicated database
// (cambio_bench_statements, dropped afterwards):
// 1. asOf: one account with BENCH_POSTINGS (1,000,000) postings seeded straight into Postgres (INSERT ... SELECT
//    generate_series, with the balance history each posting carries, one a second up to a minute ago), then
//    BENCH_ASOF_RUNS GET .../balances?asOf= at random instants of its history, each followed by its ceiling: the
//    same route without asOf (the running balance row, same authentication and middleware). Target p99 < 20 ms.
//    Then EXPLAIN ANALYZE of the asOf statement.
// 2. CSV, then camt.053: the statement of the whole history (every posting an entry) streamed from the API; entries/s
//    and the API process's RSS growth while it streams. Targets (each) >= 100,000 entries/s, RSS growth < 50 MB. Its
//    ceiling: the same keyset pages read in this process through the repository (no HTTP, no formatting).
// 3. Issuing: BENCH_ACCOUNTS (10,000) accounts (copies of the first, opened two days ago) and the first (opened
//    twelve days ago: yesterday's 86,400 postings are one statement) issued for yesterday (STATEMENT_INTERVAL=day),
//    in this process, as the schedule's activity does; this process's RSS growth while it issues. Target: within the
//    period (a day); the big statement streamed into its pieces, not held whole.
import { Client } from 'pg';
import { openOrm, tenantEm } from '../db/orm';
import { historyPointsAround, statementRowsPage, type EntryPosition } from '../db/repositories/statement-entries';
import { issueStatements } from '../statements/issue';
import { explainAnalyze } from './lib/explain';
import { seedPostings } from './lib/seed-postings';
import { activeAccount, newCustomer } from './lib/cambio';
import { cpuSecondsOf, rssOf } from './lib/proc';
import { log, withStack } from './lib/stack';

const POSTINGS = Number(process.env.BENCH_POSTINGS || 1_000_000);
const ASOF_RUNS = Number(process.env.BENCH_ASOF_RUNS || 1000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS || 10_000);

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

void withStack({ database: 'cambio_bench_statements', worker: true, api: true }, async (stack) => {
  const db = new Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const c = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Statements Ltda');
  const accountId = await activeAccount(c, ['BRL']);
  let t = Date.now();
  await seedPostings(db, accountId, c.customerId, POSTINGS);
  await db.query(`update accounts set created_at = now() - interval '12 days' where id = $1`, [accountId]);
  await db.query('analyze ledger_entries; analyze ledger_transactions');
  log(`seeded ${POSTINGS} postings in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const range = (
    await db.query(`select min(booked_at) as first, max(booked_at) as last from ledger_entries where account_id = $1`, [
      accountId,
    ])
  ).rows[0] as { first: Date; last: Date };

  // 1. asOf
  const url = (path: string) => `${stack.apiUrl}${path}`;
  const headers = { Authorization: `Bearer ${c.token}` };
  const span = range.last.getTime() - range.first.getTime();
  const times: number[] = [];
  const ceiling: number[] = [];
  const timed = async (path: string, into: number[]) => {
    const start = performance.now();
    const res = await fetch(url(path), { headers });
    await res.arrayBuffer();
    into.push(performance.now() - start);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  };
  for (let i = 0; i < ASOF_RUNS; i++) {
    const at = new Date(range.first.getTime() + Math.random() * (span + 60_000)).toISOString();
    await timed(`/api/accounts/${accountId}/balances?asOf=${at}`, times);
    await timed(`/api/accounts/${accountId}/balances`, ceiling);
  }
  times.sort((a, b) => a - b);
  ceiling.sort((a, b) => a - b);
  const ms = (xs: number[], p: number) => pct(xs, p).toFixed(2);
  log(
    `asOf over ${ASOF_RUNS} requests: p50 ${ms(times, 50)} ms, p99 ${ms(times, 99)} ms; ceiling (no asOf) p50 ` +
      `${ms(ceiling, 50)} ms, p99 ${ms(ceiling, 99)} ms; p99 ratio ${(pct(times, 99) / pct(ceiling, 99)).toFixed(2)}`,
  );
  const middle = new Date(range.first.getTime() + span / 2).toISOString();
  const plan = await explainAnalyze(
    db,
    `select b.asset, h.available_after, h.held_after from balances b left join lateral (
       select e.available_after, e.held_after from ledger_entries e
       where e.account_id = b.account_id and e.asset = b.asset and e.account_id is not null and e.booked_at < $1
       order by e.booked_at desc, e.balance_seq desc limit 1) h on true
     where b.account_id = $2 and b.customer_id = $3`,
    [middle, accountId, c.customerId],
  );
  log(`asOf statement: ${plan.ms.toFixed(3)} ms, ${plan.node}`);

  // 2. CSV and camt.053 streaming
  const pid = stack.api?.proc.pid;
  const periodStart = new Date(range.first.getTime() - 1000).toISOString();
  const periodEnd = new Date(range.last.getTime() + 1000).toISOString();
  /** Streams the statement in `format`, counting its entries (CSV: lines after the header; camt.053: `</Ntry>`). */
  const stream = async (format: 'csv' | 'camt053') => {
    const rss0 = rssOf(pid)?.rssMb ?? 0;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid)?.rssMb ?? 0)), 100);
    const cpu0 = pid ? cpuSecondsOf(pid) : undefined;
    const started = performance.now();
    const res = await fetch(
      url(
        `/api/accounts/${accountId}/statement?asset=BRL&periodStart=${periodStart}&periodEnd=${periodEnd}` +
          `&format=${format}`,
      ),
      { headers },
    );
    let count = 0;
    let bytes = 0;
    // `</Ntry>` ends in `>` (62): counted where a `>` closes those seven bytes, across chunk boundaries.
    const tag = Buffer.from('</Ntry>');
    let tail = Buffer.alloc(0);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (format === 'csv') {
        for (const b of chunk) if (b === 10) count++;
        continue;
      }
      const bytesIn = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
      // A tag cut by the chunk boundary: the last bytes before it and the first after, joined (a few bytes).
      if (Buffer.concat([tail, bytesIn.subarray(0, tag.length - 1)]).includes(tag)) count++;
      for (let i = bytesIn.indexOf(tag); i !== -1; i = bytesIn.indexOf(tag, i + tag.length)) count++;
      tail = Buffer.from(bytesIn.subarray(Math.max(0, bytesIn.length - (tag.length - 1))));
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const entries = format === 'csv' ? count - 1 : count;
    // The API's CPU per entry: what a format's writer costs, the figure the machine's other load moves least.
    const cpu1 = pid ? cpuSecondsOf(pid) : undefined;
    const apiCpu =
      cpu0 !== undefined && cpu1 !== undefined
        ? `, API CPU ${(((cpu1 - cpu0) * 1e6) / entries).toFixed(2)} µs per entry`
        : '';
    log(
      `${format === 'csv' ? 'CSV' : 'camt.053'}: ${entries} entries, ${(bytes / 1e6).toFixed(1)} MB in ` +
        `${seconds.toFixed(1)} s = ${Math.round(entries / seconds)} entries/s; API RSS ${rss0.toFixed(0)} MB -> ` +
        `peak ${peak.toFixed(0)} MB (growth ${(peak - rss0).toFixed(1)} MB)${apiCpu}`,
    );
    return { entries, seconds };
  };
  const { entries, seconds } = await stream('csv');
  // The document banks import (decision 0113): the same entries through the XML writer, schema-shaped.
  const camt = await stream('camt053');

  // The ceiling: the same pages read here through the repository.
  const orm = await openOrm(stack.databaseUrl, { poolMax: 8 });
  const em = tenantEm(orm, c.customerId);
  const {
    points: [from, until],
  } = await historyPointsAround(em, accountId, 'BRL', periodStart, periodEnd);
  t = performance.now();
  let rows = 0;
  for (let after: EntryPosition | null = from.position; ;) {
    const page = await statementRowsPage(em, accountId, 'BRL', 2, after, until.position!, 2000);
    rows += page.length;
    if (page.length < 2000) break;
    after = { bookedAt: page[page.length - 1].bookedAt, seq: page[page.length - 1].seq };
  }
  const ceilingRate = rows / ((performance.now() - t) / 1000);
  // Each format's rate over the same run's ceiling: the figure to compare across runs on a shared machine.
  log(
    `ceiling (the pages alone, in process): ${rows} rows at ${Math.round(ceilingRate)} rows/s; ` +
      `CSV ratio ${(entries / seconds / ceilingRate).toFixed(2)}, ` +
      `camt.053 ratio ${(camt.entries / camt.seconds / ceilingRate).toFixed(2)}`,
  );

  // 3. Issuing for ACCOUNTS accounts
  const cols = (
    await db.query(
      `select column_name from information_schema.columns where table_name = 'accounts' and column_name not in
       ('id', 'created_at') order by ordinal_position`,
    )
  ).rows.map((r: { column_name: string }) => `"${r.column_name}"`);
  await db.query(
    `insert into accounts (id, created_at, ${cols.join(', ')})
     select gen_random_uuid(), now() - interval '2 days', ${cols.join(', ')} from accounts a, generate_series(1, $2)
     where a.id = $1`,
    [accountId, ACCOUNTS],
  );
  const ownRss0 = process.memoryUsage().rss / 2 ** 20;
  let ownPeak = ownRss0;
  const ownSampler = setInterval(() => (ownPeak = Math.max(ownPeak, process.memoryUsage().rss / 2 ** 20)), 100);
  t = performance.now();
  const issued = await issueStatements(
    { orm, config: { statementInterval: 'day', webhookTaskQueue: 'cambio-webhooks' } },
    new Date(),
  );
  const issueSeconds = (performance.now() - t) / 1000;
  clearInterval(ownSampler);
  const big = (
    await db.query(
      `select count(*)::int as pieces, sum(length(c.text))::bigint as chars from statements s
       join statement_chunks c on c.body_id = s.body_id where s.account_id = $1`,
      [accountId],
    )
  ).rows[0] as { pieces: number; chars: string };
  log(
    `issuing: ${issued.issued} statements (${issued.skipped} skipped) in ${issueSeconds.toFixed(1)} s; the big one ` +
      `${(Number(big.chars) / 1e6).toFixed(1)} MB in ${big.pieces} pieces; bench RSS ${ownRss0.toFixed(0)} MB -> ` +
      `peak ${ownPeak.toFixed(0)} MB (growth ${(ownPeak - ownRss0).toFixed(1)} MB)`,
  );
  await orm.close(true);
  await db.end();
});
