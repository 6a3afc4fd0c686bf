// The CRYPTO deposit scanner (decision 0131): one run of the `crypto-reconciliation` schedule. It reads the
// configured tokens' Transfer logs in ranges of at most EVM_MAX_BLOCK_RANGE blocks from the cursor kept in Postgres,
// records each transfer to a deposit's address PENDING (rail reference `{chainId}:{txHash}:{logIndex}`), and then
// looks at the pending ones: EVM_CONFIRMATIONS deep with their block's hash unchanged, they become RECEIVED and are
// decided as any received payment (matched as a PIX is); their block gone, DROPPED. Every run also reads the last
// EVM_CONFIRMATIONS blocks again, and every block from EVM_CONFIRMATIONS below the oldest pending transfer's: a
// reorganisation that put a transfer in another block, later or earlier, is seen there (decisions 0220, 0291).
import { parseAbiItem, type Log } from 'viem';
import { systemEm } from '../db/orm';
import { inTransaction } from '../db/transaction';
import {
  confirmTransfer,
  countConfirmations,
  depositsByWallet,
  dropTransfer,
  oldestPendingBlock,
  pendingTransfers,
  recordSeenTransfers,
  scanCursor,
  type SeenTransfer,
} from '../db/repositories/crypto-deposits';
import type { CryptoRail } from '../rails/crypto';
import { InexactAmountError, unitsToAmount } from '../rails/crypto/amounts';
import type { ChainToken } from '../rails/crypto/chain';
import { erc20Transfer, type Erc20Transfer } from '../rails/crypto/erc20-transfer';
import { firstLine, RailUnavailableError } from '../rails/errors';
import { AMOUNT_LIMIT, Dec } from '../domain/money';
import { decideInboundPayment, type SettleContext } from './record-and-decide';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

// A run's decisions wait this long at most; what is not decided by then is the sweep's (the record is RECEIVED).
const DECISION_DEADLINE_MS = 3_000;

export interface ScanResult {
  chainId: number;
  head: string;
  fromBlock: string;
  /** Transfer logs of the configured tokens read. */
  logs: number;
  /** Transfers to deposit addresses recorded for the first time (PENDING). */
  seen: number;
  confirmed: number;
  dropped: number;
  /** Transfers to deposit addresses of nothing Cambio can hold (zero units, or dust alone): not payments. */
  empty: number;
  /** Transfers to deposit addresses too large for any balance (at least AMOUNT_LIMIT): by reference, unrecorded. */
  unholdable: string[];
  /** Logs of a listed token with Transfer's topic in another shape than ERC-20's: by reference, unrecorded. */
  misshapen: string[];
}

/** One scan: new blocks (and the unconfirmed tail) read, then the pending transfers confirmed or dropped. */
export async function scanCryptoDeposits(
  s: SettleContext,
  rail: CryptoRail,
  opts: { onProgress?: () => void } = {},
): Promise<ScanResult> {
  const info = await rail.chain();
  const { client, config } = rail;
  const head = await chainCall(() => client.getBlockNumber({ cacheTime: 0 }));
  const em = systemEm(s.orm);
  const range = BigInt(config.maxBlockRange);
  const depth = BigInt(config.confirmations);
  // A chain's first scan starts where the API handed out its first deposit address (the cursor it set, decision
  // 0292); with no deposit yet, one range back from the head: the chain's history before is none of our business.
  const cursor = (await scanCursor(em, info.chainId)) ?? max(0n, head - range + 1n);
  const tail = max(0n, head - depth + 1n);
  // From the oldest pending transfer's block as well: a reorganisation may have moved it to another block that the
  // cursor has passed, and that block is out of the tail when no run read the chain for EVM_CONFIRMATIONS blocks (a
  // worker or node outage). Its old block is about to be found changed, and DROPPED it would never be read again.
  // The new block may be an earlier one (the new chain mined it right after the fork): a reorganisation no deeper
  // than EVM_CONFIRMATIONS forks at most that many blocks below the pending block (docs/decisions/0291).
  const oldest = await oldestPendingBlock(em, rail.rail, info.chainId);
  const pending = oldest === null ? tail : max(0n, oldest - depth + 1n);
  const start = min(min(cursor, tail), pending);
  const result: ScanResult = {
    chainId: info.chainId,
    head: head.toString(),
    fromBlock: start.toString(),
    logs: 0,
    seen: 0,
    confirmed: 0,
    dropped: 0,
    empty: 0,
    unholdable: [],
    misshapen: [],
  };
  const byAddress = new Map(info.tokens.map((t) => [t.address.toLowerCase(), t]));
  // A range whose answer is too large for the node or the client (busy blocks) is read in halves until it fits.
  let span = range;
  for (let from = start; from <= head; from += span) {
    const to = min(from + span - 1n, head);
    let logs: TransferLog[];
    try {
      logs = await client.getLogs({
        address: info.tokens.map((t) => t.address),
        event: TRANSFER,
        fromBlock: from,
        toBlock: to,
      });
    } catch (err) {
      if (span > 1n && TOO_LARGE.test((err as Error).message)) {
        span = max(1n, span / 2n);
        from -= span; // the loop adds it back: the same start, a smaller range
        continue;
      }
      throw unavailable(err);
    }
    result.logs += logs.length;
    const transfers = await transfersToDeposits(em, rail.rail, info.chainId, logs, byAddress, head, result);
    const next = max(cursor, to + 1n);
    result.seen += await inTransaction(em, (tx) => recordSeenTransfers(tx, rail.rail, info.chainId, transfers, next));
    opts.onProgress?.();
  }
  // Only this chain's: a block height and hash mean something on their own chain alone. Read against another
  // chain's (the deployment moved to it, or two deployments share a database), a transfer was DROPPED for a reorg
  // that never happened, and never seen again by its own chain's scan (docs/decisions/0309).
  await countConfirmations(em, rail.rail, info.chainId, head);
  for (const p of await pendingTransfers(em, rail.rail, info.chainId)) {
    const confirmations = Number(head - BigInt(p.blockNumber!) + 1n);
    if (confirmations < config.confirmations) continue;
    const block = await chainCall(() => client.getBlock({ blockNumber: BigInt(p.blockNumber!) }).catch(notFound));
    // No block at a height below the head it gave is the node's lag (a load-balanced backend behind the one that
    // answered the head), not a reorg: nothing is known, the next run looks again. A DROPPED transfer is never seen
    // again once its block is deeper than the rescanned tail, so only a block of another hash drops it.
    if (!block) continue;
    if (block.hash !== p.blockHash) {
      if (await dropTransfer(em, p.id, p.blockHash!)) result.dropped++;
      continue;
    }
    const payment = await inTransaction(em, (tx) => confirmTransfer(tx, p.id, p.blockHash!, confirmations));
    if (!payment) continue;
    result.confirmed++;
    // Decided now when all is well; else the record stays RECEIVED for the sweep.
    await decideInboundPayment(s, payment, DECISION_DEADLINE_MS, `rail:${rail.rail}`).catch(() => undefined);
    opts.onProgress?.();
  }
  return result;
}

type TransferLog = Log<bigint, number, false, typeof TRANSFER>;

/** The logs that pay a deposit's address, as payments: for that deposit when the token and amount can be taken. */
async function transfersToDeposits(
  em: Parameters<typeof depositsByWallet>[0],
  railName: string,
  chainId: number,
  logs: TransferLog[],
  tokens: Map<string, ChainToken>,
  head: bigint,
  result: Pick<ScanResult, 'empty' | 'unholdable' | 'misshapen'>,
): Promise<SeenTransfer[]> {
  // The node gives every log of a listed token whose first topic is Transfer's, whatever its shape, and viem decodes
  // what it can of it: a log without the value (ERC-721's shape, data cut short) had no amount, failed the range and
  // stopped the scanner on it for good. Only ERC-20's own shape says who was paid how much (docs/decisions/0290,
  // read by erc20Transfer: 0308).
  const read = logs.map((log) => ({ log, transfer: erc20Transfer(log) }));
  for (const { log } of read.filter((r) => !r.transfer)) {
    result.misshapen.push(`${chainId}:${log.transactionHash}:${log.logIndex}`);
  }
  const transfers = read.filter((r): r is { log: TransferLog; transfer: Erc20Transfer } => Boolean(r.transfer));
  const addresses = [...new Set(transfers.map((r) => r.transfer.to.toLowerCase()))];
  const deposits = await depositsByWallet(em, railName, addresses);
  const out: SeenTransfer[] = [];
  for (const { log, transfer } of transfers) {
    const deposit = deposits.get(transfer.to.toLowerCase());
    const token = tokens.get(log.address.toLowerCase());
    if (!deposit || !token || log.blockNumber === null || !log.blockHash || !log.transactionHash) continue;
    const units = transfer.value;
    let amount: string;
    let exact = true;
    try {
      amount = unitsToAmount(units, token.decimals);
    } catch (err) {
      if (!(err instanceof InexactAmountError)) throw err;
      // Dust below Cambio's 6 places: the customer's, but no deposit's (UNMATCHED); what was sent is kept exactly.
      exact = false;
      amount = unitsToAmount(units - (units % 10n ** BigInt(token.decimals - 6)), token.decimals);
    }
    const endToEndId = `${chainId}:${log.transactionHash}:${log.logIndex}`;
    // Anyone may send any address a transfer of zero units (address poisoning does, to every address that receives
    // stablecoins): it moves no money, and recorded it would be a short payment that fails the deposit. Dust alone
    // is the same: nothing a balance can hold (docs/decisions/0180).
    if (new Dec(amount).isZero()) {
      result.empty++;
      continue;
    }
    // Past what any balance may hold (the bound of every amount, 10^15), a value no stablecoin's supply reaches: a
    // record would overflow its column and stop the scanner on this range for ever. Named for an operator instead.
    if (new Dec(amount).gte(AMOUNT_LIMIT)) {
      result.unholdable.push(`${endToEndId} (${units} units of ${token.asset})`);
      continue;
    }
    // Another token than the deposit's, or dust: the customer's suspense, for an operator.
    const forDeposit = exact && deposit.tokenContract === token.address.toLowerCase();
    out.push({
      endToEndId,
      operationId: forDeposit ? deposit.operationId : null,
      customerId: deposit.customerId,
      accountId: forDeposit ? deposit.accountId : null,
      asset: token.asset,
      amount,
      tokenUnits: units.toString(),
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      confirmations: Number(head - log.blockNumber + 1n),
    });
  }
  return out;
}

// What nodes and viem answer when a log query returns too much: the response size, or the node's own result cap.
const TOO_LARGE = /size limit|more than \d+ results|too many|limit exceeded|response size|query returned more/i;

const unavailable = (err: unknown): RailUnavailableError =>
  err instanceof RailUnavailableError ? err : new RailUnavailableError(`the EVM node failed a call: ${firstLine(err)}`);

/** A node that cannot be reached is RailUnavailableError: the activity is retried, nothing was recorded. */
async function chainCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw unavailable(err);
  }
}

const notFound = (err: unknown) => {
  if ((err as Error).name === 'BlockNotFoundError') return null;
  throw err;
};
const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
