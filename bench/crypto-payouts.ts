// npm run bench:crypto-payouts — a burst of BENCH_PAYOUTS (200) CRYPTO payouts to fresh wallets at once, through the
// CRYPTO connector's payouts capability, its Postgres store and the hot wallet's workflow, the single writer of its
// nonces (the code the railSendPayout/railFollowPayout activities run; the workflow and its activity on the stack's
// worker), against a local anvil and a dedicated database (cambio_bench_crypto_payouts). Checks that the
// hot wallet's nonces are consecutive with no gap and no duplicate, on chain and in Postgres, and that every
// recipient got its tokens exactly once; prints the time and the rate. (bench/crypto.ts, the deposits' bench, is
// another branch's; this phase joins it there.)
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { erc20Abi, getAddress } from 'viem';
import { loadConfig } from '../config';
import { openOrm } from '../db/orm';
import { outgoingNonces } from '../db/repositories/crypto-outgoing';
import { systemEm } from '../db/orm';
import { railStores } from '../activities/rail-stores';
import { CryptoRail } from '../rails/crypto';
import { HOT_WALLET_INDEX, sandboxAccount, sandboxHotWalletKey } from '../sandbox-chain/accounts';
import { startAnvil } from '../sandbox-chain/anvil';
import { chainClients, chainEnv, deploySandboxTokens } from '../sandbox-chain/tokens';
import { log, withStack } from './lib/stack';

const PAYOUTS = Number(process.env.BENCH_PAYOUTS || 200);

void withStack({ database: 'cambio_bench_crypto_payouts', worker: true, api: false }, async (stack) => {
  const anvil = await startAnvil({ chainId: 31337 });
  try {
    const clients = chainClients(anvil.url, 31337);
    const tokens = await deploySandboxTokens(clients);
    const env = {
      ...process.env,
      ...chainEnv(anvil.url, 31337, tokens),
      SANDBOX: 'true',
      DATABASE_URL: stack.databaseUrl,
      CRYPTO_HOT_WALLET_KEY: sandboxHotWalletKey(),
      EVM_CONFIRMATIONS: '1',
    };
    const config = loadConfig(env);
    const orm = await openOrm(stack.databaseUrl);
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const temporal = new Client({ connection, namespace: stack.namespace });
    const queues = { taskQueue: stack.taskQueue, railsTaskQueue: `${stack.taskQueue}-rails` };
    const rail = new CryptoRail(config.crypto, railStores(orm, temporal, queues));
    const payouts = rail.payouts!;
    const targets = Array.from({ length: PAYOUTS }, () =>
      getAddress(`0x${randomUUID().replace(/-/g, '')}${randomUUID().slice(0, 8)}`),
    );
    const requests = targets.map((key, i) => ({ payoutId: `bench${i}`, amount: '1.000000', key, asset: 'USDC' }));
    log(`${PAYOUTS} payouts at once from ${sandboxAccount(HOT_WALLET_INDEX).address}`);
    const started = performance.now();
    await Promise.all(requests.map((r) => payouts.sendPayout(r)));
    const sent = performance.now();
    let pending = requests;
    while (pending.length > 0) {
      const states = await Promise.all(pending.map((r) => payouts.followPayout(r)));
      const failed = states.filter((s) => s.status === 'FAILED');
      if (failed.length > 0) throw new Error(`${failed.length} payouts FAILED: ${failed[0].reason}`);
      pending = pending.filter((_, i) => states[i].status !== 'COMPLETED');
    }
    const done = performance.now();
    const nonces = await outgoingNonces(systemEm(orm), 31337, sandboxAccount(HOT_WALLET_INDEX).address);
    const gaps = nonces.filter((n, i) => n !== nonces[0] + i).length;
    if (nonces.length !== PAYOUTS || gaps > 0) throw new Error(`nonces not consecutive: ${nonces.join(',')}`);
    const balances = await Promise.all(
      targets.map((t) =>
        clients.public.readContract({ address: tokens.USDC, abi: erc20Abi, functionName: 'balanceOf', args: [t] }),
      ),
    );
    const wrong = balances.filter((b) => b !== 1_000_000n).length;
    if (wrong > 0) throw new Error(`${wrong} recipients did not get exactly 1 USDC`);
    const onChain = await clients.public.getTransactionCount({ address: sandboxAccount(HOT_WALLET_INDEX).address });
    log(
      `nonces ${nonces[0]}..${nonces[nonces.length - 1]}: consecutive, no gap, no duplicate (chain count ${onChain})`,
    );
    log(`broadcast: ${((sent - started) / 1000).toFixed(2)} s, ${(PAYOUTS / ((sent - started) / 1000)).toFixed(0)}/s`);
    log(`completed: ${((done - started) / 1000).toFixed(2)} s, ${(PAYOUTS / ((done - started) / 1000)).toFixed(0)}/s`);
    await orm.close(true);
    await connection.close();
  } finally {
    await anvil.stop();
  }
});
