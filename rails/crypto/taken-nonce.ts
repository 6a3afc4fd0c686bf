// A hot wallet transfer whose nonce another transaction took (docs/decisions/0294): an operator's cancel or speed-up
// sent from the wallet's key on the same nonce (decision 0135 leaves a fee too low to them). Our signed bytes can
// then never be mined, and the node refuses them ("nonce too low") for ever. Once the chain shows that nonce used
// EVM_CONFIRMATIONS deep by a transaction whose hash is not ours, the transfer has its answer from that transaction:
//   - it moved exactly our units of our token from the wallet to our recipient (a speed-up): COMPLETED, its hash the
//     end-to-end id (the recipient was paid, once);
//   - it moved none of our token to our recipient (a cancel, another payment, a revert): FAILED, nothing of ours left
//     the wallet and nothing of ours ever will;
//   - it moved some other amount of it to our recipient: PENDING with the reason, an operator's to settle (neither
//     answer is true: FAILED would give back a hold that partly left, COMPLETED would book what was not paid).
// Until it is that deep (a reorg could still drop it and mine our bytes) the transfer stays PENDING.
import { getAddress, type PublicClient } from 'viem';
import { firstLine } from '../errors';
import { erc20Transfer } from './erc20-transfer';
import type { OutgoingTx } from './outgoing-store';
import type { TransferState } from './transfer-state';

/**
 * What the chain says of `row`'s nonce, our bytes having no receipt and the node refusing them: undefined when the
 * nonce is not used EVM_CONFIRMATIONS deep or is used by our own bytes (mined meanwhile: the next read has their
 * receipt), else the transfer's answer as above.
 */
export async function takenNonceState(
  client: PublicClient,
  row: OutgoingTx,
  confirmations: number,
): Promise<TransferState | undefined> {
  const wallet = getAddress(row.wallet);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const deep = head - BigInt(confirmations) + 1n;
  if (deep < 0n) return undefined;
  const usedBy = (blockNumber: bigint) => client.getTransactionCount({ address: wallet, blockNumber });
  if ((await usedBy(deep)) <= row.nonce) return undefined;
  const pending = { status: 'PENDING' as const, hash: row.hash as `0x${string}`, nonce: row.nonce };
  let taker;
  try {
    taker = await nonceTaker(client, wallet, row.nonce, deep, usedBy);
  } catch (err) {
    // A node without the older states (not an archive) cannot say which transaction it was: never a guess.
    return { ...pending, reason: `nonce ${row.nonce} is used by another transaction, not found: ${firstLine(err)}` };
  }
  if (taker.hash === row.hash) return undefined;
  const receipt = await client.getTransactionReceipt({ hash: taker.hash });
  const paid = receipt.status === 'success' ? paidTo(receipt.logs, row, wallet) : 0n;
  const by = `nonce ${row.nonce} was used by transaction ${taker.hash}, not this transfer's`;
  if (paid === BigInt(row.units)) return { status: 'COMPLETED', hash: taker.hash, nonce: row.nonce };
  if (paid === 0n) return { status: 'FAILED', hash: taker.hash, nonce: row.nonce, reason: `${by}: nothing was paid` };
  return { ...pending, reason: `${by}: it paid ${paid} of ${row.units} base units, an operator's to settle` };
}

/**
 * The transaction of `wallet` with `nonce`, mined at or before block `deep` (where the wallet's count passed it): the
 * first block whose count is past `nonce`, found by halving (a node has no lookup by sender and nonce), holds it.
 */
async function nonceTaker(
  client: PublicClient,
  wallet: `0x${string}`,
  nonce: number,
  deep: bigint,
  usedBy: (blockNumber: bigint) => Promise<number>,
): Promise<{ hash: `0x${string}` }> {
  let low = 0n;
  let high = deep;
  while (low < high) {
    const middle = (low + high) / 2n;
    if ((await usedBy(middle)) > nonce) high = middle;
    else low = middle + 1n;
  }
  const block = await client.getBlock({ blockNumber: low, includeTransactions: true });
  const tx = block.transactions.find((t) => getAddress(t.from) === wallet && t.nonce === nonce);
  if (!tx) throw new Error(`block ${low} has no transaction of ${wallet} with nonce ${nonce}`);
  return { hash: tx.hash };
}

/** Base units of `row`'s token the logs move from the wallet to `row`'s recipient. */
function paidTo(
  logs: readonly { address: string; data: `0x${string}`; topics: readonly `0x${string}`[] }[],
  row: OutgoingTx,
  wallet: `0x${string}`,
): bigint {
  let paid = 0n;
  for (const log of logs) {
    if (getAddress(log.address) !== getAddress(row.token)) continue;
    // Another event, or a Transfer in another shape, moves nothing of ours (decision 0308).
    const transfer = erc20Transfer(log);
    if (transfer?.from === wallet && transfer.to === getAddress(row.recipient)) paid += transfer.value;
  }
  return paid;
}
