// npm run bench:operations — transfers and swaps end to end at 20 concurrent clients against the real stack:
// each client POSTs an operation (a swap first POSTs its quote), then polls GET /api/operations/{id} until
// COMPLETED, then starts the next. In the same run, the ceiling: a bare Temporal workflow with one no-op
// activity (bench/ceiling-workflow.ts) on the same Temporal server, its worker inside this process, driven
// the same way (start, then poll describe() until COMPLETED, same poll interval).
// Targets: completed ops/s >= 0.7x the ceiling, POST p99 < 150 ms (issue 10), worker RSS < 400 MB.
// Each client has its own funded account (20 accounts, BRL+USD); a transfer goes from the client's account
// to the next client's, a swap converts BRL→USD inside the client's account.
// Knobs: BENCH_CONCURRENCY (20), BENCH_OPS (300 per kind), BENCH_WARMUP (40), BENCH_POLL_MS (50); BENCH_MODE=fair
// runs the fair-share bench instead (10 customers, one flooding: bench/operations-fair.ts).
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { activeAccount, BenchCustomer, fund, newCustomer } from './lib/cambio';
import { expectStatus } from './lib/http';
import { closedLoop, LoadResult, now, Recorder, sleep } from './lib/load';
import { CpuMeter, CpuReport, postgresPids, rssOf, waitForQuiet } from './lib/proc';
import { log, Stack, withStack } from './lib/stack';
import { startCeilingWorker } from './lib/ceiling';
import { banner, cpuTable, fmt, ok, rssLine, table } from './lib/report';
import { fairShareBench } from './operations-fair';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 20);
const OPS = Number(process.env.BENCH_OPS || 300);
const WARMUP = Number(process.env.BENCH_WARMUP || 40);
const POLL_MS = Number(process.env.BENCH_POLL_MS || 50);
const OP_TIMEOUT_MS = 60000;

const emptyCpu: CpuReport = { wallSeconds: 0, cores: 0, groups: [], machineBusyPct: NaN, otherPctOfCore: NaN };

interface Phase {
  name: string;
  result: LoadResult;
  cpu: CpuReport;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
async function inBatches<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i], i);
    }),
  );
  return out;
}

async function pollOperation(c: BenchCustomer, id: string): Promise<void> {
  const deadline = Date.now() + OP_TIMEOUT_MS;
  for (;;) {
    const op = expectStatus(await c.http.get(`/api/operations/${id}`), 200, 'get operation');
    const status = op.currentState?.status;
    if (status === 'COMPLETED') return;
    if (status === 'FAILED')
      throw new Error(`operation ${id} FAILED: ${JSON.stringify(op.currentState.reason ?? op.currentState)}`);
    if (Date.now() > deadline) throw new Error(`operation ${id} still ${status} after ${OP_TIMEOUT_MS} ms`);
    await sleep(POLL_MS);
  }
}

async function main(stack: Stack) {
  const rssAtStart = { api: rssOf(stack.api!.proc.pid), worker: rssOf(stack.worker!.proc.pid) };
  // --- set-up: one customer, one ACTIVE account per client, each funded with BRL through a real deposit.
  const customer = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Ops Ltda', CONCURRENCY);
  const t0 = now();
  const accounts = await inBatches(Array.from({ length: Math.max(2, CONCURRENCY) }), 5, () =>
    activeAccount(customer, ['BRL', 'USD']),
  );
  await inBatches(accounts, 5, (id) => fund(customer, id, 'BRL', '1000000.00'));
  log(`${accounts.length} accounts ACTIVE and funded with BRL 1,000,000.00 each in ${fmt((now() - t0) / 1000)} s`);

  // --- the ceiling's worker, in this process, on its own task queue of the same server.
  const ceiling = await startCeilingWorker(stack);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection, namespace: stack.namespace });

  const meter = new CpuMeter({
    api: () => [stack.api!.proc.pid!],
    worker: () => [stack.worker!.proc.pid!],
    temporal: () => (stack.temporal?.proc.pid ? [stack.temporal.proc.pid] : []),
    postgres: () => postgresPids([stack.databaseName]),
  });

  type Task = (i: number, rec: Recorder, client: number) => Promise<void>;
  const tasks: Record<string, Task> = {
    'bare workflow + no-op activity (ceiling)': async (_i, rec) => {
      const t = now();
      const handle = await rec.time('post', () => ceiling.start(temporal));
      const deadline = Date.now() + OP_TIMEOUT_MS;
      for (;;) {
        const d = await handle.describe();
        if (d.status.name === 'COMPLETED') break;
        if (d.status.name !== 'RUNNING') throw new Error(`ceiling workflow ${d.status.name}`);
        if (Date.now() > deadline) throw new Error('ceiling workflow did not complete');
        await sleep(POLL_MS);
      }
      rec.add('e2e', now() - t);
    },
    'transfer (POST /api/operations/transfer)': async (_i, rec, client) => {
      const t = now();
      const res = await rec.time('post', () =>
        customer.http.post('/api/operations/transfer', {
          sourceAccountId: accounts[client],
          targetAccountId: accounts[(client + 1) % accounts.length],
          amount: { value: '10.00', asset: 'BRL' },
        }),
      );
      const op = expectStatus(res, 201, 'transfer');
      await pollOperation(customer, op.id);
      rec.add('e2e', now() - t);
    },
    'swap (POST /api/quotes + /api/operations/swap)': async (_i, rec, client) => {
      const t = now();
      const q = expectStatus(
        await rec.time('quote', () =>
          customer.http.post('/api/quotes', {
            accountId: accounts[client],
            sourceAsset: 'BRL',
            targetAsset: 'USD',
            sourceAmount: '10.00',
          }),
        ),
        201,
        'quote',
      );
      const res = await rec.time('post', () =>
        customer.http.post('/api/operations/swap', { accountId: accounts[client], quoteId: q.id }),
      );
      const op = expectStatus(res, 201, 'swap');
      await pollOperation(customer, op.id);
      rec.add('e2e', now() - t);
    },
  };

  const run = async (name: string): Promise<Phase> => {
    stack.assertAlive();
    const idle = await waitForQuiet();
    if (idle >= 25) log(`machine still ${fmt(idle)}% busy before "${name}" (other tenants); measuring anyway`);
    await closedLoop({ concurrency: CONCURRENCY, total: WARMUP, task: tasks[name] });
    meter.start();
    const result = await closedLoop({ concurrency: CONCURRENCY, total: OPS, task: tasks[name] });
    const cpu = meter.stop();
    if (result.errors) log(`${name}: ${result.errors} errors, e.g. ${result.errorSamples.join(' | ')}`);
    log(
      `${name}: ${fmt(result.perSecond)} completed/s, POST p50 ${fmt(result.rec.stats('post').p50)} ms, ` +
        `p99 ${fmt(result.rec.stats('post').p99)} ms`,
    );
    return { name, result, cpu };
  };

  // BENCH_PHASES=transfer (or swap, ceiling; comma-separated) runs only those, e.g. for a clean CPU profile.
  const only = (process.env.BENCH_PHASES || 'ceiling,transfer,swap').split(',');
  const skipped = (name: string): Phase => ({
    name: `${name} (skipped)`,
    result: { ok: 0, errors: 0, errorSamples: [], wallMs: 0, perSecond: NaN, rec: new Recorder() },
    cpu: emptyCpu,
  });
  const CEILING = 'bare workflow + no-op activity (ceiling)';
  const TRANSFER = 'transfer (POST /api/operations/transfer)';
  const SWAP = 'swap (POST /api/quotes + /api/operations/swap)';
  const phases: Phase[] = [];
  phases.push(only.includes('ceiling') ? await run(CEILING) : skipped(CEILING));
  phases.push(only.includes('transfer') ? await run(TRANSFER) : skipped(TRANSFER));
  phases.push(only.includes('swap') ? await run(SWAP) : skipped(SWAP));
  const again = only.includes('ceiling') ? await run(CEILING) : skipped(CEILING);
  phases.push({ ...again, name: 'bare workflow + no-op activity (ceiling, again)' });
  stack.assertAlive();

  const apiRss = rssOf(stack.api!.proc.pid);
  const workerRss = rssOf(stack.worker!.proc.pid);
  const temporalRss = rssOf(stack.temporal?.proc.pid);

  // --- sanity, database side: everything completed, nothing left in the outbox, the ledger balances.
  const pg = new PgClient({ connectionString: stack.databaseUrl });
  await pg.connect();
  const byStatus = await pg.query(
    `select type, status, count(*)::int as n from operations group by type, status order by type, status`,
  );
  const outbox = await pg.query(`select count(*)::int as n from workflow_starts`);
  const unbalanced = await pg.query(
    `select asset, sum(amount)::text as s from ledger_entries group by asset having sum(amount) <> 0`,
  );
  await pg.end();

  await ceiling.stop();
  await connection.close();
  customer.http.close();

  // --- report
  banner(
    `bench:operations — ${CONCURRENCY} concurrent clients, ${OPS} operations per phase (after ${WARMUP} ` +
      `warm-up), poll every ${POLL_MS} ms`,
  );
  console.log(
    table(
      ['phase', 'completed/s', 'POST p50', 'POST p99', 'e2e p50', 'e2e p99', 'errors'],
      phases.map(({ name, result }) => {
        const post = result.rec.stats('post');
        const e2e = result.rec.stats('e2e');
        return [name, result.perSecond, post.p50, post.p99, e2e.p50, e2e.p99, String(result.errors)];
      }),
    ),
  );
  const swapQuote = phases[2].result.rec.stats('quote');
  console.log(
    `(ms; "POST" is the operation's POST, or the workflow start for the ceiling; swaps' quote POST: ` +
      `p50 ${fmt(swapQuote.p50)} ms, p99 ${fmt(swapQuote.p99)} ms; e2e = POST to COMPLETED seen by polling)`,
  );
  const ceilingRate = (phases[0].result.perSecond + phases[3].result.perSecond) / 2;
  const rows: Array<Array<string>> = [];
  for (const p of [phases[1], phases[2]]) {
    const ratio = p.result.perSecond / ceilingRate;
    const p99 = p.result.rec.stats('post').p99;
    const kind = p.name.split(' ')[0];
    rows.push([
      `${kind}s completed/s vs ceiling (mean of both runs)`,
      `${fmt(ratio, 2)}x (${fmt(p.result.perSecond)} / ${fmt(ceilingRate)})`,
      '>= 0.70x',
      ok(ratio >= 0.7),
    ]);
    rows.push([`${kind} POST p99`, `${fmt(p99)} ms`, '< 150 ms', ok(p99 < 150)]);
  }
  rows.push([
    'worker RSS after the run',
    `${fmt(workerRss?.rssMb ?? NaN)} MB`,
    '< 400 MB',
    ok((workerRss?.rssMb ?? Infinity) < 400),
  ]);
  console.log('');
  console.log(table(['target', 'measured', 'goal', ''], rows));
  console.log('');
  console.log(
    table(
      ['process', 'RSS MB (VmRSS)', 'peak MB (VmHWM)', 'RSS MB when the stack came up'],
      [
        [...rssLine('api', apiRss), fmt(rssAtStart.api?.rssMb ?? NaN)],
        [...rssLine('worker', workerRss), fmt(rssAtStart.worker?.rssMb ?? NaN)],
        rssLine('temporal dev server', temporalRss),
        rssLine('bench (incl. ceiling worker)', rssOf(process.pid)),
      ],
    ),
  );
  console.log(
    `\noperations in the ` +
      `database: ${byStatus.rows.map((r) => `${r.type} ${r.status} ${r.n}`).join(', ')}; outbox rows ` +
      `left: ${outbox.rows[0].n}; unbalanced assets: ${unbalanced.rows.length}`,
  );
  for (const p of phases.filter((x) => x.cpu.groups.length)) {
    console.log(`\n${p.name}:`);
    console.log(cpuTable(p.cpu));
  }
}

// BENCH_MODE=fair: 10 customers, one flooding (bench/operations-fair.ts).
if (process.env.BENCH_MODE === 'fair')
  void withStack({ database: 'cambio_bench_ops_fair', worker: true, api: true }, fairShareBench);
else void withStack({ database: 'cambio_bench_ops', worker: true, api: true }, main);
