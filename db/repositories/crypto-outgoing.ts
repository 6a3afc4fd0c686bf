// The hot wallet's outgoing transfers (tables `crypto_hot_wallets`, `crypto_outgoing_txs`; docs/decisions/0135,
// 0142): each payout or return of the CRYPTO rail gets one nonce of the wallet, given by the wallet's workflow (its
// activity calls reserveOutgoingNonces with every request waiting) in a transaction that holds the wallet's row lock,
// so nonces are given in the batch's order, consecutively, and never twice; then its signed bytes are stored before
// the first broadcast. Plain SQL through the caller's EntityManager; no tenant (the hot wallet is the platform's).
// Units are token base units, as decimal strings (numeric(78,0) holds any uint256).
import type { Em } from '../orm';
import { inTransaction } from '../transaction';
import { lockUntilTransactionEnds } from '../transaction-lock';

export interface OutgoingTxRow {
  id: string;
  chainId: number;
  wallet: string;
  nonce: number;
  token: string;
  recipient: string;
  units: string;
  raw: string | null;
  hash: string | null;
  final: boolean;
}

export type NewOutgoingTx = Pick<OutgoingTxRow, 'id' | 'chainId' | 'wallet' | 'token' | 'recipient' | 'units'>;

const COLUMNS = `id, chain_id, wallet, nonce, token, recipient, units::text as units, raw, hash, final`;

const toRow = (r: Record<string, unknown>): OutgoingTxRow => ({
  id: r.id as string,
  chainId: Number(r.chain_id),
  wallet: r.wallet as string,
  nonce: Number(r.nonce),
  token: r.token as string,
  recipient: r.recipient as string,
  units: String(r.units),
  raw: (r.raw as string | null) ?? null,
  hash: (r.hash as string | null) ?? null,
  final: r.final === true,
});

export async function findOutgoingTx(em: Em, id: string): Promise<OutgoingTxRow | undefined> {
  const [row] = await em.execute(`select ${COLUMNS} from crypto_outgoing_txs where id = ?`, [id]);
  return row ? toRow(row) : undefined;
}

/**
 * What the wallet held when a transfer asked for its nonce (base units and wei, decimal strings), and the gas one
 * transfer may burn at the fee then (wei).
 */
export interface WalletFunds {
  tokens: string;
  ether: string;
  gasPerTransfer: string;
}

/**
 * One transfer asking for its nonce, what the chain counts for the address (the count of a first transfer), and the
 * wallet's funds as read before asking (absent: no check).
 */
export interface NonceRequest {
  tx: NewOutgoingTx;
  chainNonce: number;
  funds?: WalletFunds;
}

/**
 * What a request of a batch got: its transfer with its nonce, why the database refused its row, or why the wallet
 * cannot pay it with every transfer given a nonce before it (`short`: no nonce taken).
 */
export type NonceOutcome = { tx: OutgoingTxRow } | { refused: string } | { short: string };

/**
 * Gives each transfer of `requests`, in their order, the wallet's next nonce, or finds the nonce its id was given
 * before: one transaction under the wallet's row lock for the whole batch. Only the hot wallet's workflow calls it
 * (activities/hot-wallet.ts); this lock and the unique (chain_id, wallet, nonce) are the backstop behind that writer.
 * The wallet's first transfer starts its count at its request's `chainNonce`. The row lock makes every other
 * reservation wait for this transaction: consecutive nonces, no gap (a reserved nonce is never given back: its
 * transfer is signed and sent by every retry until it is mined), no duplicate.
 *
 * A new transfer whose request carries the wallet's funds is given no nonce when they do not cover it besides every
 * transfer given one before it and not final yet (tokens, and gas for all of them): answered `short`, nothing written.
 *
 * Each row is written in a savepoint of its own: a row the database refuses as data (SQLSTATE class 22 or 23, a bug
 * or a second writer) is rolled back alone, takes no nonce and is answered `refused`; the others go on. Any other
 * failure (Postgres down, a lock timeout) fails the whole batch, which its caller retries.
 */
export async function reserveOutgoingNonces(em: Em, requests: NonceRequest[]): Promise<NonceOutcome[]> {
  if (requests.length === 0) return [];
  const { chainId, wallet } = requests[0].tx;
  const other = requests.find((r) => r.tx.chainId !== chainId || r.tx.wallet !== wallet);
  if (other) throw new Error(`a batch of nonces is one wallet's: ${other.tx.id} is not ${wallet}'s on ${chainId}`);
  return inTransaction(em, async (t) => {
    await t.execute(
      `insert into crypto_hot_wallets (chain_id, address, next_nonce) values (?, ?, ?) on conflict do nothing`,
      [chainId, wallet, requests[0].chainNonce],
    );
    const [row] = await t.execute(
      `select next_nonce from crypto_hot_wallets where chain_id = ? and address = ? for update`,
      [chainId, wallet],
    );
    let next = Number(row.next_nonce);
    const outcomes: NonceOutcome[] = [];
    for (const { tx, funds } of requests) {
      try {
        const got = await inTransaction<Given>(t, async (s) => {
          await lockTransferId(s, tx.id);
          const existing = await findOutgoingTx(s, tx.id);
          if (existing) return { given: existing, fresh: false };
          const refusal = await refusedBefore(s, tx.id);
          if (refusal !== undefined) return { refusedBefore: refusal };
          // The funds check under the row lock, against every transfer given a nonce before this one (this batch's
          // too): checked outside it, two payouts that each fit the wallet would both pass, and the second revert.
          const short = funds && (await shortfall(s, tx, funds));
          if (short) return { short };
          await s.execute(
            `insert into crypto_outgoing_txs (id, chain_id, wallet, nonce, token, recipient, units)
             values (?, ?, ?, ?, ?, ?, ?)`,
            [tx.id, chainId, wallet, next, tx.token, tx.recipient, tx.units],
          );
          return { given: { ...tx, nonce: next, raw: null, hash: null, final: false }, fresh: true };
        });
        if ('short' in got) {
          outcomes.push({ short: got.short });
          continue;
        }
        if ('refusedBefore' in got) {
          outcomes.push({ refused: `${tx.id} was refused before it was given a nonce: ${got.refusedBefore}` });
          continue;
        }
        if (got.fresh) next += 1;
        outcomes.push({ tx: got.given });
      } catch (err) {
        const state = sqlState(err);
        if (!state || !REFUSED_ROW.test(state)) throw err;
        outcomes.push({ refused: `${state}: ${err instanceof Error ? err.message : String(err)}` });
      }
    }
    await t.execute(`update crypto_hot_wallets set next_nonce = ? where chain_id = ? and address = ?`, [
      next,
      chainId,
      wallet,
    ]);
    return outcomes;
  });
}

/** Why the wallet's `funds` cannot pay `tx` besides every transfer of it not final yet; undefined when they can. */
async function shortfall(em: Em, tx: NewOutgoingTx, funds: WalletFunds): Promise<string | undefined> {
  const open = await openOutgoing(em, tx.chainId, tx.wallet, tx.token);
  if (BigInt(funds.tokens) < BigInt(open.units) + BigInt(tx.units)) {
    return `the hot wallet holds ${funds.tokens} base units, short of ${tx.units} more after ${open.units} committed`;
  }
  if (BigInt(funds.ether) < BigInt(open.transfers + 1) * BigInt(funds.gasPerTransfer)) {
    return `the hot wallet holds ${funds.ether} wei, short of the gas of ${open.transfers + 1} transfers`;
  }
  return undefined;
}

/** A request's row: given (or found given before), or not given: for want of funds, or refused before. */
type Given = { given: OutgoingTxRow; fresh: boolean } | { short: string } | { refusedBefore: string };

/**
 * A transfer id's nonce and its refusal are written one at a time: a transaction-scoped advisory lock per id, held
 * to the COMMIT, whichever wallet and chain each side names (a worker whose CRYPTO_NETWORK changed refuses on another
 * chain than the request it left waiting).
 */
async function lockTransferId(em: Em, id: string): Promise<void> {
  await lockUntilTransactionEnds(em, `cambio:outgoing-tx:${id}`);
}

async function refusedBefore(em: Em, id: string): Promise<string | undefined> {
  const [row] = await em.execute(`select reason from crypto_transfer_refusals where id = ?`, [id]);
  return row ? String(row.reason) : undefined;
}

/**
 * Records that the transfer `id` is refused before any nonce (decision 0344), so that no request for it still waiting
 * at a wallet's workflow is given one; under the id's lock, which the nonce is given under too, so of the refusal and
 * the nonce whichever comes first holds. Answers the transfer when it had been given a nonce first: it is then
 * followed, not refused (its bytes may be on the chain).
 */
export async function refuseOutgoingUnordered(em: Em, id: string, reason: string): Promise<OutgoingTxRow | undefined> {
  return inTransaction(em, async (t) => {
    await lockTransferId(t, id);
    const given = await findOutgoingTx(t, id);
    if (given) return given;
    await t.execute(`insert into crypto_transfer_refusals (id, reason) values (?, ?) on conflict do nothing`, [
      id,
      reason.slice(0, 1000),
    ]);
    return undefined;
  });
}

/** Data exceptions (22) and integrity constraint violations (23): the row is wrong, not the database. */
const REFUSED_ROW = /^2[23]/;

function sqlState(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** Stores the signed bytes unless some earlier attempt stored them first; answers what is stored. */
export async function storeSignedTx(em: Em, id: string, raw: string, hash: string): Promise<OutgoingTxRow> {
  await em.execute(`update crypto_outgoing_txs set raw = ?, hash = ? where id = ? and raw is null`, [raw, hash, id]);
  const row = await findOutgoingTx(em, id);
  if (!row) throw new Error(`outgoing transfer ${id} vanished`);
  return row;
}

/** The transfer has its final answer on chain (confirmed or reverted): its amount is no longer committed. */
export async function markOutgoingFinal(em: Em, id: string): Promise<void> {
  await em.execute(`update crypto_outgoing_txs set final = true where id = ? and not final`, [id]);
}

/** What the wallet has committed and not yet seen final: units of `token`, and transfers of any token (gas). */
export async function openOutgoing(
  em: Em,
  chainId: number,
  wallet: string,
  token: string,
): Promise<{ units: string; transfers: number }> {
  const [row] = await em.execute(
    `select coalesce(sum(units) filter (where token = ?), 0)::text as units, count(*)::int as transfers
       from crypto_outgoing_txs where chain_id = ? and wallet = ? and not final`,
    [token, chainId, wallet],
  );
  return { units: String(row.units), transfers: Number(row.transfers) };
}

/** The nonces of the wallet's transfers, in order (operators and the bench check they run with no gap). */
export async function outgoingNonces(em: Em, chainId: number, wallet: string): Promise<number[]> {
  const rows = await em.execute(
    `select nonce from crypto_outgoing_txs where chain_id = ? and wallet = ? order by nonce`,
    [chainId, wallet],
  );
  return rows.map((r: Record<string, unknown>) => Number(r.nonce));
}
