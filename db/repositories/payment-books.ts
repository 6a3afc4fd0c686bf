// The books of inbound payments, per asset, as the payment records tell them and as the ledger tells them
// (decision 0076: `cambio books check`). Hand-written aggregates through the caller's
// EntityManager (`em.execute`); read-only; across customers (an operator's check, system scope). `paymentBooks`
// reads both sides in one snapshot (decision 0080: it never reports a difference that concurrent
// recording made up).
import { IsolationLevel } from '@mikro-orm/core';
import type { Em } from '../orm';
import { Dec } from '../../domain/money';

/** What the records say, per asset. */
export interface RecordBooks {
  /** Every payment as received (remainders are part of the payment they were split from). */
  received: Dec;
  /** RECEIVED: recorded, not decided yet (in the suspense). */
  undecided: Dec;
  /** MATCHED and taken by its completed deposit (what the deposit used). */
  matched: Dec;
  /** MATCHED toward a deposit that has not completed (FAILED, replayable): still in the suspense. */
  matchedPending: Dec;
  unmatched: Dec;
  returning: Dec;
  returned: Dec;
  credited: Dec;
}

/** What the ledger says, per asset, from the suspense accounts' entries and balance rows. */
export interface LedgerBooks {
  /** Arrivals into the suspense (`inbound:<id>:receive`). */
  received: Dec;
  /** Taken out by deposits that matched payments (their settlement). */
  matched: Dec;
  /** Taken out by operators' credits (the DEPOSIT each one created). */
  credited: Dec;
  /** Sent back through the rail (`inbound:<id>:return`). */
  returned: Dec;
  /** The sum of the suspense accounts' entries. */
  entries: Dec;
  /** The suspense accounts' balance rows. */
  balance: Dec;
}

const SUSPENSE_ACCOUNTS = `select md5('suspense:' || id::text)::uuid as account_id from customers
  union all select md5('suspense:platform')::uuid`;

const dec = (v: unknown) => new Dec(String(v ?? '0'));

function byAsset<T>(rows: Array<Record<string, unknown>>, fields: Array<keyof T & string>): Map<string, T> {
  const out = new Map<string, T>();
  for (const r of rows) {
    const books = {} as Record<string, Dec>;
    for (const f of fields) books[f] = dec(r[f]);
    out.set(String(r.asset), books as T);
  }
  return out;
}

export async function recordBooks(em: Em, asset?: string): Promise<Map<string, RecordBooks>> {
  const rows = await em.execute(
    `select p.asset,
       sum(p.amount) filter (where p.remainder_of is null and p.status not in ('PENDING', 'DROPPED'))::text
         as received,
       sum(p.amount) filter (where p.status = 'RECEIVED')::text as undecided,
       sum(coalesce(p.matched_amount, p.amount)) filter (where p.status = 'MATCHED' and o.status = 'COMPLETED')::text
         as matched,
       sum(p.amount) filter (where p.status = 'MATCHED' and o.status is distinct from 'COMPLETED')::text
         as matched_pending,
       sum(p.amount) filter (where p.status = 'UNMATCHED')::text as unmatched,
       sum(p.amount) filter (where p.status = 'RETURNING')::text as returning,
       sum(p.amount) filter (where p.status = 'RETURNED')::text as returned,
       sum(p.amount) filter (where p.status = 'CREDITED')::text as credited
     from inbound_payments p left join operations o on o.id = p.operation_id
     ${asset ? 'where p.asset = ?' : ''} group by p.asset`,
    asset ? [asset] : [],
  );
  return byAsset<RecordBooks>(
    rows.map((r: Record<string, unknown>) => ({ ...r, matchedPending: r.matched_pending })),
    ['received', 'undecided', 'matched', 'matchedPending', 'unmatched', 'returning', 'returned', 'credited'],
  );
}

export async function ledgerBooks(em: Em, asset?: string): Promise<Map<string, LedgerBooks>> {
  const onlyAsset = asset ? ' and e.asset = ?' : '';
  const settle = `(t.key like '%:settle' or t.key like '%:legacy-match')`;
  // An operator's credit is a DEPOSIT whose intent names the payment it credits.
  const credit = `(o.intent->>'inboundPaymentId' is not null)`;
  const entries = await em.execute(
    `select e.asset,
       sum(e.amount) filter (where t.key like 'inbound:%:receive')::text as received,
       (-sum(e.amount) filter (where ${settle} and not ${credit}))::text as matched,
       (-sum(e.amount) filter (where ${settle} and ${credit}))::text as credited,
       (-sum(e.amount) filter (where t.key like 'inbound:%:return'))::text as returned,
       sum(e.amount)::text as entries
     from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
     left join operations o on o.id = t.operation_id
     where e.account_id in (${SUSPENSE_ACCOUNTS})${onlyAsset} group by e.asset`,
    asset ? [asset] : [],
  );
  const balances = await em.execute(
    `select b.asset, sum(b.available)::text as balance from balances b
     where b.account_id in (${SUSPENSE_ACCOUNTS})${asset ? ' and b.asset = ?' : ''} group by b.asset`,
    asset ? [asset] : [],
  );
  const balanceOf = new Map(balances.map((r: Record<string, unknown>) => [String(r.asset), r.balance]));
  const assets = new Set([...entries.map((r: Record<string, unknown>) => String(r.asset)), ...balanceOf.keys()]);
  const rows = [...assets].map((a) => ({
    ...(entries.find((r: Record<string, unknown>) => r.asset === a) ?? {}),
    asset: a,
    balance: balanceOf.get(a),
  }));
  return byAsset<LedgerBooks>(rows, ['received', 'matched', 'credited', 'returned', 'entries', 'balance']);
}

/**
 * Both sides of the books as of one instant: one REPEATABLE READ, READ ONLY transaction, so every statement reads the
 * snapshot its first one took. A payment recorded, matched or returned meanwhile (one transaction that writes its
 * record and its postings together) is either wholly in it or wholly out of it; read in separate transactions, the
 * records could count it and the ledger not yet, and the check would report a difference nobody made.
 */
export async function paymentBooks(
  em: Em,
  asset?: string,
): Promise<{ records: Map<string, RecordBooks>; ledger: Map<string, LedgerBooks> }> {
  return em.transactional(
    async (tx) => {
      const records = await recordBooks(tx, asset);
      const ledger = await ledgerBooks(tx, asset);
      return { records, ledger };
    },
    { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true },
  );
}
