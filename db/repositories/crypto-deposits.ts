// CRYPTO deposits' SQL (decisions 0130-0132): the address index sequence, the deposits by their wallet address, the
// chain scanner's cursor, and the transfers it saw, recorded PENDING until they are confirmed (RECEIVED, and in the
// suspense as any received payment) or their block leaves the chain (DROPPED, never in any balance).
import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import { SqlBatch } from '../batch';
import { entityFromRow, selectColumns } from '../rows';
import { InboundPaymentSchema, type InboundPayment } from '../entities';
import { addPosting } from './ledger';
import { receivePostings } from '../../domain/postings';
import { Dec } from '../../domain/money';

const columns = (em: Em, alias = 'p') => selectColumns(em, InboundPaymentSchema, alias);
const toEntity = (em: Em, row: Record<string, unknown>) => entityFromRow(em, InboundPaymentSchema, row);

/** The next deposit address index (a Postgres sequence: never the same twice, whatever the number of processes). */
export async function nextDepositAddressIndex(em: Em): Promise<number> {
  const [row] = await em.execute(`select nextval('crypto_deposit_address_index')::int as i`);
  return Number(row.i);
}

/** A CRYPTO deposit as the scanner needs it: who it is for and what it takes. */
export interface WalletDeposit {
  operationId: string;
  customerId: string;
  accountId: string;
  /** Lower case, as logs carry it. */
  walletAddress: string;
  tokenContract: string;
}

/** The deposits whose wallet address is one of `addresses` (lower case), by that address. */
export async function depositsByWallet(em: Em, rail: string, addresses: string[]): Promise<Map<string, WalletDeposit>> {
  if (addresses.length === 0) return new Map();
  const rows = await em.execute(
    `select id, customer_id, account_id, lower(intent -> 'fundingInstruction' ->> 'walletAddress') as wallet,
       lower(intent -> 'fundingInstruction' ->> 'tokenContract') as token
     from operations
     where type = 'DEPOSIT' and (intent -> 'fundingInstruction' ->> 'rail') = ?
       and (intent -> 'fundingInstruction' ->> 'tokenContract') is not null
       and lower(intent -> 'fundingInstruction' ->> 'walletAddress') = any(string_to_array(?, ','))`,
    [rail, addresses.join(',')],
  );
  return new Map(
    rows.map((r: Record<string, string>) => [
      r.wallet,
      {
        operationId: r.id,
        customerId: r.customer_id,
        accountId: r.account_id,
        walletAddress: r.wallet,
        tokenContract: r.token,
      },
    ]),
  );
}

/** The first block of `chainId` the scanner has not read; null before its first run. */
export async function scanCursor(em: Em, chainId: number): Promise<bigint | null> {
  const [row] = await em.execute(`select next_block::text as next from chain_scan_cursors where chain_id = ?`, [
    chainId,
  ]);
  return row ? BigInt(row.next) : null;
}

/**
 * Makes the first read of `chainId` start at `block` at the latest (decimal string): a deposit's address was handed
 * out there, before any scan of that chain ran. A chain read already keeps its cursor: its scans go on from it.
 */
export async function startScanCursor(em: Em, chainId: number, block: string): Promise<void> {
  await em.execute(
    `insert into chain_scan_cursors (chain_id, next_block, updated_at) values (?, ?, now())
     on conflict (chain_id) do nothing`,
    [chainId, block],
  );
}

/** A transfer to a deposit address, as the chain shows it. */
export interface SeenTransfer {
  endToEndId: string;
  operationId: string | null;
  customerId: string | null;
  accountId: string | null;
  asset: string;
  /** Cambio's 6 decimals (for dust: truncated; `tokenUnits` keeps what was sent). */
  amount: string;
  tokenUnits: string;
  blockNumber: bigint;
  blockHash: string;
  confirmations: number;
}

/**
 * Records `transfers` PENDING and moves the cursor to `nextBlock`, in one transaction (the caller's `tx`): a scan
 * killed before the COMMIT leaves both as they were and reads the range again. A transfer recorded already is the
 * same payment; one PENDING or DROPPED seen in another block (a reorganisation put it back) takes that block, PENDING
 * again, and what that block's log at its index says: a log's index counts its whole block's logs, so a transaction
 * mined again after another has its logs shifted, and another of its logs (another deposit, another amount) may sit
 * at a recorded index. A PENDING or DROPPED record is in no balance, so it takes the log it now names; the log it
 * named before has an index of its own in the new block (docs/decisions/0326). Returns how many were new.
 */
export async function recordSeenTransfers(
  tx: Em,
  rail: string,
  chainId: number,
  transfers: SeenTransfer[],
  nextBlock: bigint,
): Promise<number> {
  let created = 0;
  for (const t of transfers) {
    const rows = await tx.execute(
      `insert into inbound_payments as p (id, operation_id, customer_id, account_id, amount, asset, rail,
         end_to_end_id, status, confirmations, block_number, block_hash, token_units, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?, ?, ?, now(), now())
       on conflict (rail, end_to_end_id) where remainder_of is null do update
         set status = 'PENDING', block_number = excluded.block_number, block_hash = excluded.block_hash,
           confirmations = excluded.confirmations, operation_id = excluded.operation_id,
           customer_id = excluded.customer_id, account_id = excluded.account_id, amount = excluded.amount,
           asset = excluded.asset, token_units = excluded.token_units, updated_at = now()
         where p.status in ('PENDING', 'DROPPED') and p.block_hash is distinct from excluded.block_hash
       returning (xmax = 0) as inserted`,
      [
        randomUUID(),
        t.operationId,
        t.customerId,
        t.accountId,
        t.amount,
        t.asset,
        rail,
        t.endToEndId,
        t.confirmations,
        t.blockNumber.toString(),
        t.blockHash,
        t.tokenUnits,
      ],
    );
    if (rows[0]?.inserted) created++;
  }
  await tx.execute(
    `insert into chain_scan_cursors (chain_id, next_block, updated_at) values (?, ?, now())
     on conflict (chain_id) do update set next_block = excluded.next_block, updated_at = now()`,
    [chainId, nextBlock.toString()],
  );
  return created;
}

/** The CRYPTO payments still PENDING, oldest block first. */
export async function pendingTransfers(em: Em, rail: string, chainId: number, limit = 1000): Promise<InboundPayment[]> {
  const rows = await em.execute(
    `select ${columns(em)} from inbound_payments p
     where p.status = 'PENDING' and p.rail = ? and p.end_to_end_id like ? order by p.block_number, p.id limit ?`,
    [rail, `${chainId}:%`, limit],
  );
  return rows.map((r: Record<string, unknown>) => toEntity(em, r));
}

/**
 * The lowest block of `chainId` holding a transfer still PENDING, or null: the scan reads the chain again from there,
 * so a transfer a reorganisation moved is found in its new block before its old one is looked at.
 */
export async function oldestPendingBlock(em: Em, rail: string, chainId: number): Promise<bigint | null> {
  const [row] = await em.execute(
    `select min(block_number)::text as block from inbound_payments
     where status = 'PENDING' and rail = ? and end_to_end_id like ?`,
    [rail, `${chainId}:%`],
  );
  return row?.block ? BigInt(row.block) : null;
}

/** Counts the pending transfers' confirmations at `head` (what the API shows while they wait). */
export async function countConfirmations(em: Em, rail: string, chainId: number, head: bigint): Promise<void> {
  await em.execute(
    `update inbound_payments set confirmations = greatest(0, ?::bigint - block_number + 1)::int, updated_at = now()
     where status = 'PENDING' and rail = ? and end_to_end_id like ?
       and confirmations is distinct from greatest(0, ?::bigint - block_number + 1)::int`,
    [head.toString(), rail, `${chainId}:%`, head.toString()],
  );
}

/**
 * A pending transfer whose block is still `blockHash` at `confirmations`: RECEIVED, and its arrival in its
 * suspense, in `tx` (as any received payment: recordPayment). Null when it is no longer PENDING in that block.
 */
export async function confirmTransfer(
  tx: Em,
  id: string,
  blockHash: string,
  confirmations: number,
): Promise<InboundPayment | null> {
  const [row] = await tx.execute(
    `update inbound_payments p set status = 'RECEIVED', confirmations = ?, updated_at = now()
     where p.id = ? and p.status = 'PENDING' and p.block_hash = ?
     returning ${columns(tx)}`,
    [confirmations, id, blockHash],
  );
  if (!row) return null;
  const payment = toEntity(tx, row);
  const batch = new SqlBatch();
  addPosting(batch, {
    key: `inbound:${id}:receive`,
    operationId: null,
    customerId: payment.customerId,
    description: 'inbound payment received',
    postings: receivePostings({ ...payment, amount: new Dec(payment.amount.toString()) }),
  });
  await batch.run(tx);
  return payment;
}

/** A pending transfer whose block left the chain: DROPPED (it never reached a balance). */
export async function dropTransfer(em: Em, id: string, blockHash: string): Promise<boolean> {
  const rows = await em.execute(
    `update inbound_payments set status = 'DROPPED', updated_at = now()
     where id = ? and status = 'PENDING' and block_hash = ? returning id`,
    [id, blockHash],
  );
  return rows.length > 0;
}
