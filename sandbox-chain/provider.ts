// What `npm start` (scripts/start.js) needs to know of the sandbox chain (main.ts), in the words of the simulated
// providers (psp-simulator/provider.ts), so that the start script names no rail: the variable that names a real
// node instead, the line of its ready block, and what main.ts is started with. Structural, not imported from there:
// the chain's tooling imports nothing of Cambio's.

export const sandboxChainProvider = {
  name: 'sandbox-chain',
  /** Set by whoever starts Cambio: a real node, and no local chain. */
  chosenBy: 'EVM_RPC_URL',
  ready: { label: 'EVM chain', none: 'none: CRYPTO deposits are refused (RAIL_NOT_CONFIGURED)' },
  /** The environment main.ts is given, beside SANDBOX_CHAIN_PORT and SANDBOX_CHAIN_STATE_FILE. */
  startEnv: (env: NodeJS.ProcessEnv): Record<string, string> => ({ EVM_CHAIN_ID: env.EVM_CHAIN_ID || '31337' }),
  /** The ready block's value for the settings main.ts printed. */
  shown: (settings: Record<string, string>): string =>
    `${settings.EVM_RPC_URL} (chain ${settings.EVM_CHAIN_ID}, USDC ${settings.EVM_TOKEN_USDC})`,
};
