// A test file's own CRYPTO deployment on the run's database and Temporal: a local chain (chain.ts) with a chain id of
// the file's own (the scanner's cursor is per chain), a worker process on task queues of its own with the chain's
// settings (it runs the `crypto-reconciliation` schedule, the returns and the payouts, and can be killed), and an
// in-process API that knows the chain (deposits get their own address). The scan is triggered, not waited for: the
// schedule's period is an hour.
import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { erc20Abi } from 'viem';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config';
import { CryptoRail } from '../../rails/crypto';
import { RAIL_ENTRIES, Rails } from '../../rails/registry';
import { scheduleId } from '../../worker/schedules';
import type { ServiceContext } from '../../services/context';
import { startChain, type TestChain } from './chain';
import { activeAccount } from './fixtures';
import { quote } from './money';
import { spawnWorker, webhookQueueOf, type Proc } from './processes';
import { idem, stack, type TestCustomer } from './stack';

export interface CryptoStack {
  chain: TestChain;
  /** The worker's main task queue (its webhook and rails queues are named after it, as processes.ts does). */
  taskQueue: string;
  /** The worker's environment: the chain's settings and `env`; a restart (startWorker) uses it again. */
  workerEnv: Record<string, string>;
  worker: Proc;
  /** The API with the chain configured, its workflows on the stack's queue. */
  api: ReturnType<typeof supertest>;
  services: ServiceContext;
  /** The environment a CLI of this deployment runs with (its queues and the node's settings). */
  cliEnv(): Record<string, string>;
  startWorker(name: string): Promise<Proc>;
  /** One run of the worker's `crypto-reconciliation` schedule now (skipped while one is running). */
  triggerScan(): Promise<void>;
  /** The next block the scanner reads on this chain (its cursor in Postgres), or undefined before its first scan. */
  scanCursor(): Promise<bigint | undefined>;
  tokenBalance(asset: 'USDC' | 'USDT' | 'EURC' | 'BRLT', of: `0x${string}`): Promise<bigint>;
  /** A CRYPTO deposit of `value` opened through the API: its operation id and the address to pay. */
  openDeposit(c: TestCustomer, value: string, asset?: string): Promise<CryptoDeposit>;
  /** Kills nothing (killAll does): deletes the schedules of the worker's queue and stops the chain. */
  stop(): Promise<void>;
}

export interface CryptoDeposit {
  id: string;
  accountId: string;
  walletAddress: `0x${string}`;
}

export async function cryptoStack(options: {
  confirmations: number;
  /** The node's URL for the worker (a proxy in front of the chain, say), ready before the worker starts. */
  workerRpcUrl?: (chain: TestChain) => Promise<string>;
  env?: Record<string, string>;
}): Promise<CryptoStack> {
  const st = await stack();
  const chain = await startChain({ chainId: 32_000 + Math.floor(Math.random() * 30_000) });
  const taskQueue = `cambio-crypto-${randomUUID()}`;
  const workerEnv = chain.env({
    EVM_CONFIRMATIONS: String(options.confirmations),
    EVM_SCAN_EVERY_SECONDS: '3600',
    ...(options.workerRpcUrl ? { EVM_RPC_URL: await options.workerRpcUrl(chain) } : {}),
    ...options.env,
  });
  const { api, services } = cryptoApi(
    st,
    chain.env({ EVM_CONFIRMATIONS: String(options.confirmations), SANDBOX: 'true' }),
  );
  const startWorker = (name: string) => spawnWorker(name, taskQueue, { env: workerEnv });
  const worker = await startWorker('crypto-worker');
  const schedule = () => st.services.temporal.schedule.getHandle(scheduleId({ taskQueue }, 'crypto-reconciliation'));
  const self: CryptoStack = {
    chain,
    taskQueue,
    workerEnv,
    worker,
    api,
    services,
    // The operator's CLI knows the node (the rail is configured) but holds no key: the worker sends the transfer.
    cliEnv: () => ({
      ...Object.fromEntries(Object.entries(workerEnv).filter(([k]) => !k.startsWith('CRYPTO_'))),
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_WEBHOOK_TASK_QUEUE: webhookQueueOf(taskQueue),
      TEMPORAL_RAILS_TASK_QUEUE: `${taskQueue}-rails`,
    }),
    startWorker,
    triggerScan: () => schedule().trigger(),
    async scanCursor() {
      const sql = `select next_block::text as next from chain_scan_cursors where chain_id = ?`;
      const [row] = await st.services.orm.em.getConnection().execute(sql, [chain.chainId]);
      return row ? BigInt(row.next) : undefined;
    },
    tokenBalance: (asset, of) =>
      chain.clients.public.readContract({
        address: chain.tokens[asset] as `0x${string}`,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [of],
      }),
    async openDeposit(c, value, asset = 'USDC') {
      const account = await activeAccount(c, [asset] as never);
      const res = await postCryptoDeposit(api, c, account.id, value, asset);
      if (res.status !== 201) throw new Error(`deposit: ${res.status} ${JSON.stringify(res.body)}`);
      const walletAddress = res.body.intent.fundingInstruction.walletAddress as `0x${string}`;
      return { id: res.body.id as string, accountId: account.id, walletAddress };
    },
    async stop() {
      // Left behind, they would start runs every period on a queue nobody serves any more.
      for await (const s of st.services.temporal.schedule.list()) {
        if (!s.scheduleId.startsWith(`${taskQueue}-`)) continue;
        await st.services.temporal.schedule
          .getHandle(s.scheduleId)
          .delete()
          .catch((err) => (err instanceof ScheduleNotFoundError ? undefined : Promise.reject(err)));
      }
      await chain.stop();
    },
  };
  return self;
}

/**
 * POST /api/operations/deposit by CRYPTO of `value` in `asset` (a same-asset quote first) through `api`, under a new
 * key: the answer as it came, whatever its status.
 */
export async function postCryptoDeposit(
  api: ReturnType<typeof supertest>,
  c: TestCustomer,
  accountId: string,
  value: string,
  asset = 'USDC',
) {
  const q = await quote(c, { accountId, sourceAsset: asset, targetAsset: asset, sourceAmount: value });
  const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'CRYPTO' } };
  return api.post('/api/operations/deposit').set(c.auth).set(idem()).send(body);
}

/**
 * The run's in-process API with the CRYPTO rail of `env` (a chain's settings) beside the stack's other rails: what a
 * test of the API's side of a chain talks to, and its services.
 */
export function cryptoApi(st: Awaited<ReturnType<typeof stack>>, env: Record<string, string>) {
  const crypto = loadConfig({ ...process.env, ...env }).crypto;
  const services: ServiceContext = {
    ...st.services,
    config: { ...st.config, crypto },
    rails: new Rails(RAIL_ENTRIES, [...(st.services.rails?.all() ?? []), new CryptoRail(crypto)]),
  };
  return { api: supertest(createApp(services).callback()), services };
}
