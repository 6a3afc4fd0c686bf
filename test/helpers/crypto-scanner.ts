// The CRYPTO deposit scanner in the test process: a local chain with a chain id of the file's own (the scanner's
// cursor is per chain, apart from any other file's), the stack's services with that chain's rail, a scan run
// directly, and deposits opened on that rail. crypto-stack.ts is the same deployment as a worker process.
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../config';
import { tenantEm } from '../../db/orm';
import type { Operation } from '../../db/entities';
import { scanCryptoDeposits } from '../../payments/crypto-scan';
import { CryptoRail } from '../../rails/crypto';
import { RAIL_ENTRIES, Rails } from '../../rails/registry';
import type { ServiceContext } from '../../services/context';
import { openDeposit } from '../../services/operations/deposit';
import { startChain, type TestChain } from './chain';
import { activeAccount } from './fixtures';
import { quote } from './money';
import { stack, type TestCustomer } from './stack';

export interface ScannerDeposit {
  op: Operation;
  account: { id: string };
  instruction: Record<string, string>;
  /** The address the deposit is paid to. */
  address: `0x${string}`;
}

export interface CryptoScanner {
  chain: TestChain;
  chainId: number;
  rail: CryptoRail;
  services: ServiceContext;
  /** One scan, through `via` (a rail on another node URL) or the file's rail. */
  scan(via?: CryptoRail): ReturnType<typeof scanCryptoDeposits>;
  /** A USDC → USDC CRYPTO deposit of `value` on a new account of `c` (`windowSeconds`: its deposit window). */
  deposit(c: TestCustomer, value: string, windowSeconds?: number): Promise<ScannerDeposit>;
}

export async function cryptoScanner(opts: {
  /** The first of the 900 chain ids the file draws its own from. */
  chainIdBase: number;
  confirmations: number;
  maxBlockRange: number;
}): Promise<CryptoScanner> {
  const st = await stack();
  const chainId = opts.chainIdBase + Math.floor(Math.random() * 900);
  const chain = await startChain({ chainId });
  const settings = {
    EVM_CONFIRMATIONS: String(opts.confirmations),
    EVM_MAX_BLOCK_RANGE: String(opts.maxBlockRange),
    SANDBOX: 'true',
  };
  const crypto = loadConfig({ ...process.env, ...chain.env(settings) }).crypto;
  const rail = new CryptoRail(crypto);
  const services: ServiceContext = {
    ...st.services,
    config: { ...st.config, crypto },
    rails: new Rails(RAIL_ENTRIES, [...(st.services.rails?.all() ?? []), rail]),
  };
  return {
    chain,
    chainId,
    rail,
    services,
    scan: (via = rail) =>
      scanCryptoDeposits({ orm: services.orm, temporal: services.temporal, config: services.config }, via),
    async deposit(c, value, windowSeconds) {
      const account = await activeAccount(c, ['USDC']);
      const pair = { sourceAsset: 'USDC', targetAsset: 'USDC' };
      const q = await quote(c, { accountId: account.id, ...pair, sourceAmount: value });
      const body = { accountId: account.id, quoteId: q.id, fundingInstruction: { rail: 'CRYPTO' } };
      const opener = windowSeconds
        ? { ...services, config: { ...services.config, depositWindowSeconds: windowSeconds } }
        : services;
      const op = await openDeposit(opener, tenantEm(services.orm, c.customerId), body, randomUUID());
      const instruction = op.intent.fundingInstruction as Record<string, string>;
      return { op, account, instruction, address: instruction.walletAddress as `0x${string}` };
    },
  };
}
