// `npm start` in sandbox without EVM_RPC_URL: a local chain for the CRYPTO rail. Starts anvil (its chain kept in a
// state file per deployment, like the simulated PSP's), deploys the four test stablecoins and funds the payers and
// the hot wallet on a fresh chain, and the sandbox payer (decision 0140) on any, then prints one line `sandbox chain
// ready {json}` with the settings Cambio needs (EVM_*, CRYPTO_DEPOSIT_XPUB, CRYPTO_HOT_WALLET_KEY, and the payer's
// EVM_SANDBOX_PAYER_KEY: the sandbox route's transfers come from it) and stays up until it is stopped, confirming
// each transaction it mines with EVM_CONFIRMATIONS blocks (confirm-blocks.ts).
// Environment: SANDBOX_CHAIN_PORT (default 8545), EVM_CHAIN_ID (default 31337), SANDBOX_CHAIN_STATE_FILE,
// EVM_CONFIRMATIONS (default 12, as Cambio's).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sandboxDepositXpub, sandboxHotWalletKey, sandboxPayerKey } from './accounts';
import { startAnvil } from './anvil';
import { confirmEachTransaction } from './confirm-blocks';
import { chainClients, chainEnv, deploySandboxTokens, fundSandboxPayer, type SandboxTokens } from './tokens';

async function main(): Promise<void> {
  const chainId = Number(process.env.EVM_CHAIN_ID || 31337);
  const stateFile = process.env.SANDBOX_CHAIN_STATE_FILE;
  // The token addresses of a kept chain, beside its state.
  const tokensFile = stateFile ? `${stateFile}.tokens.json` : undefined;
  if (stateFile) mkdirSync(path.dirname(stateFile), { recursive: true });
  const anvil = await startAnvil({ port: Number(process.env.SANDBOX_CHAIN_PORT || 8545), chainId, stateFile });
  const stop = () => {
    void anvil.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  anvil.child.once('exit', (code) => {
    console.error(`anvil exited (${code})`);
    process.exit(1);
  });

  const clients = chainClients(anvil.url, chainId);
  let tokens: SandboxTokens | undefined;
  if (tokensFile && existsSync(tokensFile)) {
    tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as SandboxTokens;
    // A state file lost while its token list stayed: deploy again.
    const code = await clients.public.getCode({ address: tokens.USDC });
    if (!code || code === '0x') tokens = undefined;
  }
  if (!tokens) {
    tokens = await deploySandboxTokens(clients);
    if (tokensFile) writeFileSync(tokensFile, JSON.stringify(tokens));
  }
  await fundSandboxPayer(clients, tokens);
  const settings = {
    ...chainEnv(anvil.url, chainId, tokens),
    CRYPTO_DEPOSIT_XPUB: sandboxDepositXpub(),
    CRYPTO_HOT_WALLET_KEY: sandboxHotWalletKey(),
    EVM_SANDBOX_PAYER_KEY: sandboxPayerKey(),
  };
  console.log(`sandbox chain ready ${JSON.stringify(settings)}`);
  confirmEachTransaction(anvil.url, clients.public, Number(process.env.EVM_CONFIRMATIONS || 12));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
