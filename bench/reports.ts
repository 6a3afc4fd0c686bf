// npm run bench:reports — GET /api/reports over 1,000,000 settled movements of ONE customer spread over 90 days,
// seeded straight into Postgres (INSERT ... SELECT generate_series, with their daily totals) in a dedicated
// database, cambio_bench_reports, dropped afterwards; then a few thousand more through the API (deposits,
// transfers and swaps run by the worker), so the write path that keeps movements and daily totals is real.
// Times, interleaved in one run, the report for a 30-day and for the 90-day window, unfiltered and filtered by
// one account, against the hand-written SQL aggregate over the same rows (one statement on `movements`, no
// daily totals), plus a tag filter, and checks that both give the same figures. Window bounds are not midnights, so
// every report also reads the partial days at its edges from single movements.
// Targets: report median <= 1.2x the hand SQL, p99 < 250 ms; stretch: 30 days under 50 ms.
// Knobs: BENCH_ROWS (1000000), BENCH_RUNS (100), BENCH_API_OPS (2000), BENCH_CONCURRENCY (20).
import { Client } from 'pg';
import { parseFilters } from '../lists/filter-parser';
import { compileFilters } from '../db/lists/filter-sql';
import { parsePeriod } from '../domain/report-period';
import { REPORT_DAY_FIELDS, REPORT_FIELDS, reportSql } from '../db/repositories/reports';
import { activeAccount, fund, newCustomer, quote, untilStatus } from './lib/cambio';
import { expectStatus } from './lib/http';
import { closedLoop, now, stats } from './lib/load';
import { CpuMeter, postgresPids, rssOf, waitForQuiet } from './lib/proc';
import { log, Stack, withStack } from './lib/stack';
import { banner, cpuTable, fmt, ok, table } from './lib/report';
import { explainAnalyze, numbered } from './lib/explain';

const ROWS = Number(process.env.BENCH_ROWS || 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS || 100);
const API_OPS = Number(process.env.BENCH_API_OPS || 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 20);
const DAY_MS = 86_400_000;

// ROWS/2 operations, two movements each: transfers (out on one account, in on the next, BRL) and swaps (BRL or
// USDC out, USD in, same account), evenly spread over the 90 days before the bench started; one in five is
// tagged region=latam. Amounts are random cents (BRL, USD) and micro-units (USDC), so the sums are real decimals.
const SEED_SQL = `
insert into movements (operation_id, account_id, asset, direction, customer_id, amount, completed_at, tags)
select op, case when side = 0 or kind = 'SWAP' then acc_out else acc_in end,
  case when side = 1 and kind = 'SWAP' then 'USD' else src end,
  case when side = 0 then 'OUTFLOW' else 'INFLOW' end,
  $1::uuid,
  case when side = 1 and kind = 'SWAP' then greatest(round(amt / 5.4, 2), 0.01) else amt end,
  at, tags
from (
  select gen_random_uuid() as op, g,
    case when g % 3 = 0 then 'SWAP' else 'TRANSFER' end as kind,
    case when g % 10 = 0 then 'USDC' else 'BRL' end as src,
    ($3::uuid[])[1 + g % 4] as acc_out, ($3::uuid[])[1 + (g + 1) % 4] as acc_in,
    case when g % 10 = 0 then round((random() * 5000)::numeric, 6) + 0.000001
      else round((random() * 50000)::numeric, 2) + 0.01 end as amt,
    $2::timestamptz - interval '90 days' + (g - 1) * (interval '90 days' / $4::int) as at,
    case when g % 5 = 0 then '[{"key":"region","value":"latam"}]'::jsonb else '[]'::jsonb end as tags
  from generate_series(1, $4::int) g
) ops cross join (values (0), (1)) s(side)`;

const SEED_DAYS_SQL = `
insert into movement_days (customer_id, day, account_id, asset, direction, tags, sum, count)
select customer_id, (completed_at at time zone 'UTC')::date, account_id, asset, direction, tags, sum(amount), count(*)
from movements where customer_id = $1 group by 1, 2, 3, 4, 5, 6
on conflict (customer_id, day, account_id, asset, direction, tags_key)
do update set sum = movement_days.sum + excluded.sum, count = movement_days.count + excluded.count`;

// The hand-written aggregate: what anyone would write against the movements for the same question.
const HAND_SQL = (c: Case) => {
  const byAccount = c.account ? 'and account_id = $4' : '';
  const byTagKey = c.tagKey ? `and tags @> jsonb_build_array(jsonb_build_object('key', $4::text))` : '';
  return `
select asset, direction, sum(amount)::text as sum, count(*)::text as count from movements
where customer_id = $1 and completed_at >= $2::timestamptz and completed_at < $3::timestamptz
${byAccount} ${byTagKey}
group by asset, direction`;
};

interface Case {
  name: string;
  start: string;
  end: string;
  account?: string;
  /** Beyond the targets: a filter on the operations' tags. */
  tagKey?: string;
  report: number[];
  hand: number[];
}

async function main(stack: Stack) {
  const customer = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Reports Ltda', CONCURRENCY + 4);
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  try {
    const accounts: string[] = [];
    for (let i = 0; i < 4; i++) accounts.push(await activeAccount(customer, ['BRL', 'USD', 'USDC']));
    const benchStart = new Date();

    log(`seeding ${ROWS.toLocaleString('en')} movements over the 90 days before ${benchStart.toISOString()}`);
    let t0 = now();
    await pg.query(SEED_SQL, [customer.customerId, benchStart, accounts, Math.floor(ROWS / 2)]);
    await pg.query(SEED_DAYS_SQL, [customer.customerId]);
    log(`seeded in ${fmt((now() - t0) / 1000)} s`);

    log(`writing ${API_OPS} operations through the API (deposits, then transfers and swaps, ${CONCURRENCY} clients)`);
    t0 = now();
    await Promise.all(accounts.map((a) => fund(customer, a, 'BRL', '1000000.00')));
    const written = await closedLoop({
      concurrency: CONCURRENCY,
      total: API_OPS,
      task: async (i) => {
        const from = accounts[i % 4];
        const op =
          i % 2 === 0
            ? expectStatus(
                await customer.http.post('/api/operations/transfer', {
                  sourceAccountId: from,
                  targetAccountId: accounts[(i + 1) % 4],
                  amount: { value: `${1 + (i % 97)}.${String(i % 100).padStart(2, '0')}`, asset: 'BRL' },
                }),
                201,
                'transfer',
              )
            : expectStatus(
                await customer.http.post('/api/operations/swap', {
                  accountId: from,
                  quoteId: (
                    await quote(customer, {
                      accountId: from,
                      sourceAsset: 'BRL',
                      targetAsset: 'USD',
                      sourceAmount: `${10 + (i % 50)}.00`,
                    })
                  ).id,
                }),
                201,
                'swap',
              );
        await untilStatus(customer, op.id, 'COMPLETED', 120000, 50);
      },
    });
    if (written.errors)
      throw new Error(`${written.errors} API operations failed, e.g. ${written.errorSamples.join(' | ')}`);
    log(`${written.ok} operations completed in ${fmt(written.wallMs / 1000)} s (${fmt(written.perSecond)} /s)`);
    t0 = now();
    await pg.query('vacuum analyze movements');
    await pg.query('vacuum analyze movement_days');
    const size = await pg.query(
      `select count(*)::int as n, pg_size_pretty(pg_total_relation_size('movements')) as size,
      (select count(*)::int from movement_days) as days from movements where customer_id = $1`,
      [customer.customerId],
    );
    log(
      `${size.rows[0].n.toLocaleString('en')} movements (table + ` +
        `indexes ${size.rows[0].size}), ${size.rows[0].days} daily total rows; vacuum ` +
        `analyze ${fmt((now() - t0) / 1000)} s`,
    );

    // The daily totals kept by the write path must equal the movements, exactly.
    const drift = await pg.query(
      `
      select coalesce(d.day, m.day) from movement_days d full join (
        select (completed_at at time zone 'UTC')::date as day, account_id, asset, direction, tags, sum(amount) as s,
          count(*) as n
        from movements where customer_id = $1 group by 1, 2, 3, 4, 5) m
      using (day, account_id, asset, direction, tags)
      where d.customer_id = $1 and (d.sum is distinct from m.s or d.count is distinct from m.n) or d.day is null`,
      [customer.customerId],
    );
    if (drift.rowCount) throw new Error(`daily totals differ from the movements on ${drift.rowCount} rows`);
    log('daily totals equal the movements per day, account, asset, direction and tag set');

    // Windows end just after the last API operation and start 30 / 90 days earlier, at no midnight.
    const end = new Date(Date.now() + 1000).toISOString();
    const at = (days: number) => new Date(Date.parse(end) - days * DAY_MS).toISOString();
    const cases: Case[] = [
      { name: '30 days', start: at(30), end, report: [], hand: [] },
      { name: '30 days, account.id[eq]', start: at(30), end, account: accounts[1], report: [], hand: [] },
      { name: '90 days', start: at(90), end, report: [], hand: [] },
      { name: '90 days, account.id[eq]', start: at(90), end, account: accounts[1], report: [], hand: [] },
      { name: '30 days, tags.key[eq]', start: at(30), end, tagKey: 'region', report: [], hand: [] },
    ];
    const filterOf = (c: Case) =>
      c.account ? `account.id[eq]=${c.account}` : c.tagKey ? `tags.key[eq]=${c.tagKey}` : undefined;
    const reportPath = (c: Case) => {
      const query = new URLSearchParams({
        periodStart: c.start,
        periodEnd: c.end,
        ...(filterOf(c) ? { filters: filterOf(c)! } : {}),
      });
      return `/api/reports?${query}`;
    };
    const handParams = (c: Case) => [
      customer.customerId,
      c.start,
      c.end,
      ...(c.account ? [c.account] : c.tagKey ? [c.tagKey] : []),
    ];

    // Same figures both ways.
    for (const c of cases) {
      const report = expectStatus(await customer.http.get(reportPath(c)), 200, c.name);
      const hand = (await pg.query(HAND_SQL(c), handParams(c))).rows as Array<{
        asset: string;
        direction: string;
        sum: string;
        count: string;
      }>;
      const fromReport = report.totals.flatMap((t: any) => [
        ...(t.inflows ? [`${t.asset} INFLOW ${t.inflows.sum.value} ${t.inflows.count}`] : []),
        ...(t.outflows ? [`${t.asset} OUTFLOW ${t.outflows.sum.value} ${t.outflows.count}`] : []),
      ]);
      const decimals = (asset: string) => (asset === 'USDC' ? 6 : 2);
      const fromHand = hand
        .map((r) => `${r.asset} ${r.direction} ${formatSum(r.sum, decimals(r.asset))} ${r.count}`)
        .sort();
      if (JSON.stringify([...fromReport].sort()) !== JSON.stringify(fromHand)) {
        throw new Error(`${c.name}: report ${JSON.stringify(fromReport)} != hand SQL ${JSON.stringify(fromHand)}`);
      }
      log(`${c.name}: report = hand SQL (${fromReport.join('; ')})`);
    }

    // Rounds interleave every case and both ways of asking, so drift from other tenants of the machine hits all
    // alike. Two warm-up rounds.
    const meter = new CpuMeter({
      api: () => [stack.api!.proc.pid!],
      postgres: () => postgresPids([stack.databaseName]),
    });
    let noisy = 0;
    for (let round = 0; round < RUNS + 2; round++) {
      if (round % 10 === 0 && (await waitForQuiet(25, 5000)) >= 25) noisy++;
      if (round === 2) meter.start();
      for (const c of cases) {
        let t = now();
        expectStatus(await customer.http.get(reportPath(c)), 200, c.name);
        if (round >= 2) c.report.push(now() - t);
        t = now();
        await pg.query(HAND_SQL(c), handParams(c));
        if (round >= 2) c.hand.push(now() - t);
      }
    }
    const cpu = meter.stop();
    if (noisy) log(`${noisy} quiet-machine checks found other tenants busy`);

    // Database side: the report's statement and the straightforward one (movements only), as EXPLAIN ANALYZE.
    const explain = (sql: string, params: unknown[]) => explainAnalyze(pg, numbered(sql), params);
    const plans: string[][] = [];
    for (const c of cases) {
      const filter = compileFilters(parseFilters(filterOf(c)), REPORT_FIELDS);
      const dayFilter = compileFilters(parseFilters(filterOf(c)), REPORT_DAY_FIELDS);
      const period = parsePeriod(c.start, c.end);
      const withDays = reportSql(customer.customerId, period, filter, dayFilter);

      const rawOnly = reportSql(customer.customerId, period, filter, null);
      const a = await explain(withDays.sql, withDays.params);
      const b = await explain(rawOnly.sql, rawOnly.params);
      plans.push([c.name, 'report (daily totals + edges)', fmt(a.ms, 2), a.node]);
      plans.push([c.name, 'movements only (no daily totals)', fmt(b.ms, 2), b.node]);
    }

    banner(
      `bench:reports — GET /api/reports, ${size.rows[0].n.toLocaleString('en')} movements of one customer ` +
        `over 90 days, ${RUNS} interleaved runs`,
    );
    const rows = cases.map((c) => {
      const r = stats(c.report);
      const h = stats(c.hand);
      return [
        c.name,
        fmt(r.p50, 2),
        fmt(r.p99, 2),
        fmt(h.p50, 2),
        fmt(h.p99, 2),
        `${fmt(r.p50 / h.p50, 2)}x`,
        ok(r.p50 <= 1.2 * h.p50 && r.p99 < 250),
      ];
    });
    console.log(
      table(
        [
          'case',
          'report p50 ms',
          'report p99 ms',
          'hand SQL p50 ms',
          'hand SQL p99 ms',
          'report/hand (p50)',
          'median <= 1.2x, p99 < 250',
        ],
        rows,
      ),
    );
    const month = stats(cases[0].report);
    console.log(
      `\nstretch: 30-day report p50 ${fmt(month.p50, 2)} ms, p99 ${fmt(month.p99, 2)} ms (goal < 50 ` +
        `ms): ${ok(month.p99 < 50)}`,
    );
    console.log('\nDatabase side (EXPLAIN ANALYZE, one execution each):');
    console.log(table(['case', 'statement', 'exec ms', 'plan'], plans));
    console.log(`\nAPI RSS after the run: ${fmt(rssOf(stack.api!.proc.pid)?.rssMb ?? NaN)} MB`);
    console.log(`\nCPU over the timed rounds (report requests and hand SQL together):`);
    console.log(cpuTable(cpu));
  } finally {
    await pg.end();
    customer.http.close();
  }
}

/** A numeric's text in the asset's scale, by string padding only (no float touches it). */
function formatSum(value: string, decimals: number): string {
  const [int, frac = ''] = value.split('.');
  if (frac.replace(/0+$/, '').length > decimals) throw new Error(`sum ${value} has more than ${decimals} decimals`);
  return `${int}.${frac.padEnd(decimals, '0').slice(0, decimals)}`;
}

void withStack({ database: 'cambio_bench_reports', worker: true, api: true }, main);
