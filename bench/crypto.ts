// npm run bench:crypto — the CRYPTO deposit scanner on a real local chain (anvil).
// 1. Throughput: BENCH_LOGS (10000) Transfer logs of history (the four test tokens, mostly to addresses that are no
//    deposit's, a few to deposits), in blocks of BENCH_LOGS_PER_BLOCK (200); the scanner (payments/crypto-scan.ts,
//    in-process, on the bench's own database) reads it all from block 0 in EVM_MAX_BLOCK_RANGE ranges: Transfer
//    logs per second of history (target >= 2,000/s: a day of a busy chain caught up in minutes).
//    Then the worker process catches up on the same history itself (its schedule paused, its cursor set back to
//    block 0, one run triggered): the time, its CPU, and the worker's memory (VmHWM, its peak resident set since
//    start, read from /proc/<pid>/status of the `node dist/worker/main.js` the bench runs; target < 400 MB).
// 2. Detection latency: the stack's worker runs the scanner's schedule (EVM_SCAN_EVERY_SECONDS=BENCH_SCAN_SECONDS,
//    default 5); a deposit is paid, EVM_CONFIRMATIONS blocks are mined, and the time from the confirming block to the
//    deposit COMPLETED is measured (BENCH_DEPOSITS, default 5; target: within one scan interval).
// Figures are printed; nothing is asserted on time.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { createTestClient, http, parseUnits, type Hex } from 'viem';
import { openOrm } from '../db/orm';
import { loadConfig } from '../config';
import { scanCryptoDeposits } from '../payments/crypto-scan';
import { CryptoRail } from '../rails/crypto';
import { PAYER_INDICES, sandboxAccount, sandboxDepositXpub, sandboxHotWalletKey } from '../sandbox-chain/accounts';
import { startAnvil } from '../sandbox-chain/anvil';
import { chainClients, chainEnv, deploySandboxTokens, SANDBOX_TOKEN_ABI } from '../sandbox-chain/tokens';
import { activeAccount, newCustomer, quote, untilStatus } from './lib/cambio';
import { expectStatus } from './lib/http';
import { cpuSecondsOf, rssOf } from './lib/proc';
import { log, withStack, type Stack } from './lib/stack';

const LOGS = Number(process.env.BENCH_LOGS || 10_000);
const PER_BLOCK = Number(process.env.BENCH_LOGS_PER_BLOCK || 200);
const SCAN_SECONDS = Number(process.env.BENCH_SCAN_SECONDS || 5);
const DEPOSITS = Number(process.env.BENCH_DEPOSITS || 5);
const CONFIRMATIONS = 12;
const CHAIN_ID = 31337;

async function main(): Promise<void> {
  const anvil = await startAnvil({ chainId: CHAIN_ID });
  try {
    const clients = chainClients(anvil.url, CHAIN_ID);
    const tokens = await deploySandboxTokens(clients);
    const test = createTestClient({ mode: 'anvil', transport: http(anvil.url, { retryCount: 0 }) });
    log(`history: ${LOGS} transfers, ${PER_BLOCK} per block`);
    const built = Date.now();
    await test.setAutomine(false);
    const payers = PAYER_INDICES.map((i) => sandboxAccount(i));
    const nonces = await Promise.all(
      payers.map((p) => clients.public.getTransactionCount({ address: p.address, blockTag: 'pending' })),
    );
    const assets = Object.values(tokens);
    for (let sent = 0; sent < LOGS;) {
      const batch: Promise<Hex>[] = [];
      for (let i = 0; i < PER_BLOCK && sent < LOGS; i++, sent++) {
        const p = sent % payers.length;
        batch.push(
          clients.wallet.writeContract({
            address: assets[sent % assets.length],
            abi: SANDBOX_TOKEN_ABI,
            functionName: 'transfer',
            args: [`0x${randomUUID().replace(/-/g, '').padEnd(40, '0')}`, parseUnits('1.5', 6)],
            account: payers[p],
            chain: clients.wallet.chain,
            nonce: nonces[p]++,
            gas: 80_000n,
          }),
        );
      }
      await Promise.all(batch);
      await test.mine({ blocks: 1 });
    }
    await test.setAutomine(true);
    const head = await clients.public.getBlockNumber({ cacheTime: 0 });
    log(`history built in ${((Date.now() - built) / 1000).toFixed(1)} s, head ${head}`);

    const env = {
      ...chainEnv(anvil.url, CHAIN_ID, tokens),
      CRYPTO_DEPOSIT_XPUB: sandboxDepositXpub(),
      CRYPTO_HOT_WALLET_KEY: sandboxHotWalletKey(),
      EVM_SCAN_EVERY_SECONDS: String(SCAN_SECONDS),
      EVM_CONFIRMATIONS: String(CONFIRMATIONS),
      SANDBOX: 'true',
    };
    await withStack({ database: 'cambio_bench_crypto', worker: true, api: true, env }, async (stack) => {
      // 1. Throughput, in-process from block 0 (the worker's own first scan started at the head).
      const orm = await openOrm(stack.databaseUrl, { poolMax: 4 });
      try {
        const config = loadConfig({ ...process.env, ...env, DATABASE_URL: stack.databaseUrl });
        const rail = new CryptoRail({ ...config.crypto, chainId: CHAIN_ID });
        // A chain id of the bench's own for the cursor, so the worker's schedule does not move it meanwhile.
        const info = await rail.chain();
        const own = { ...info, chainId: 999_999 };
        rail.chain = async () => own;
        await orm.em.getConnection().execute(`delete from chain_scan_cursors where chain_id = 999999`);
        await orm.em
          .getConnection()
          .execute(`insert into chain_scan_cursors (chain_id, next_block) values (999999, 0)`);
        const started = process.hrtime.bigint();
        const result = await scanCryptoDeposits({ orm, temporal: undefined as never, config }, rail);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        log(
          `scanner: ${result.logs} Transfer logs over ${head + 1n} blocks in ${seconds.toFixed(2)} s: ` +
            `${Math.round(result.logs / seconds)} logs/s (target >= 2000/s), ` +
            `EVM_MAX_BLOCK_RANGE=${config.crypto.maxBlockRange}`,
        );
      } finally {
        await orm.close(true);
      }

      // 1b. The same history caught up by the worker process itself (its schedule, from block 0), and the worker's
      // peak resident memory meanwhile (VmHWM of its pid: /proc/<pid>/status; target < 400 MB).
      await catchUpInWorker(stack, head);

      // 2. Detection latency through the worker's schedule.
      const c = await newCustomer(stack.databaseUrl, stack.apiUrl);
      const accountId = await activeAccount(c, ['USDC']);
      const latencies: number[] = [];
      for (let i = 0; i < DEPOSITS; i++) {
        const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '12.50' });
        const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'CRYPTO' } };
        c.http.headers['X-Idempotency-Key'] = randomUUID();
        const dep = expectStatus(await c.http.post('/api/operations/deposit', body), 201, 'deposit');
        const to = dep.intent.fundingInstruction.walletAddress as `0x${string}`;
        const hash = await clients.wallet.writeContract({
          address: tokens.USDC,
          abi: SANDBOX_TOKEN_ABI,
          functionName: 'transfer',
          args: [to, parseUnits('12.5', 6)],
          account: payers[0],
          chain: clients.wallet.chain,
        });
        await clients.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
        await test.mine({ blocks: CONFIRMATIONS - 1 });
        const confirmedAt = Date.now();
        await untilStatus(c, dep.id, 'COMPLETED', 120_000, 50);
        latencies.push(Date.now() - confirmedAt);
      }
      c.http.close();
      latencies.sort((a, b) => a - b);
      log(
        `detection: confirming block -> deposit COMPLETED, ${DEPOSITS} deposits: ` +
          `median ${latencies[Math.floor(latencies.length / 2)]} ms, max ${latencies.at(-1)} ms ` +
          `(EVM_SCAN_EVERY_SECONDS=${SCAN_SECONDS}; target: within one interval)`,
      );
    });
  } finally {
    await anvil.stop();
  }
}

/**
 * Has the worker's scheduled scan read the whole history again from block 0 (its schedule paused, no run open, its
 * cursor of this chain set to 0, one run triggered) and waits until the cursor is past the head: the time taken,
 * the worker's CPU seconds, and its resident memory before and at its peak since start (VmHWM).
 */
async function catchUpInWorker(stack: Stack, head: bigint): Promise<void> {
  const pid = stack.worker?.proc.pid;
  const orm = await openOrm(stack.databaseUrl, { poolMax: 2 });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const schedule = new Client({ connection, namespace: stack.namespace }).schedule.getHandle(
    `${stack.taskQueue}-crypto-reconciliation`,
  );
  const cursor = async () => {
    const sql = `select next_block::text as next from chain_scan_cursors where chain_id = ?`;
    const [row] = await orm.em.getConnection().execute(sql, [CHAIN_ID]);
    return row ? BigInt(row.next) : undefined;
  };
  try {
    // The worker's first scan (one range back from the head) made its cursor; no run may be open at the reset.
    while ((await cursor()) === undefined) await sleep(200);
    await schedule.pause('bench: catch-up measured from block 0');
    while ((await schedule.describe()).info.runningActions.length > 0) await sleep(100);
    await orm.em.getConnection().execute(`update chain_scan_cursors set next_block = 0 where chain_id = ?`, [CHAIN_ID]);
    const before = rssOf(pid);
    const cpu0 = pid ? cpuSecondsOf(pid) : undefined;
    const started = Date.now();
    await schedule.trigger();
    let peakRss = 0;
    while (((await cursor()) ?? 0n) <= head) {
      peakRss = Math.max(peakRss, rssOf(pid)?.rssMb ?? 0);
      if (Date.now() - started > 600_000) throw new Error('the worker did not catch up within 10 minutes');
      await sleep(50);
    }
    const seconds = (Date.now() - started) / 1000;
    const cpu = pid && cpu0 !== undefined ? (cpuSecondsOf(pid) ?? cpu0) - cpu0 : NaN;
    const after = rssOf(pid);
    log(
      `worker catch-up: ${LOGS} Transfer logs over ${head + 1n} blocks from block 0 in ${seconds.toFixed(2)} s ` +
        `(trigger to cursor past the head; ${cpu.toFixed(1)} CPU s of the worker); worker pid ${pid} RSS ` +
        `${before?.rssMb.toFixed(0)} MB before, ${peakRss.toFixed(0)} MB highest sampled, VmHWM ` +
        `${after?.peakMb.toFixed(0)} MB (peak since start; target < 400 MB)`,
    );
    await schedule.unpause();
  } finally {
    await connection.close();
    await orm.close(true);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
