// `cambio books check` (decision 0076): per asset, every payment received is accounted for
// (received = matched + unmatched + returning + returned + credited, plus what is not decided yet), the suspense
// holds exactly what is neither matched nor gone (unmatched + returning, plus undecided and matched toward a
// deposit that has not completed), and the ledger says the same as the records.
import type { Em } from '../db/orm';
import { paymentBooks, type LedgerBooks, type RecordBooks } from '../db/repositories/payment-books';
import { Dec, formatAmount } from '../domain/money';
import type { AssetCode } from '../domain/assets';

type Books<T> = { [K in keyof T]: string };

export interface AssetBooks {
  asset: string;
  records: Books<RecordBooks> & { suspense: string };
  ledger: Books<LedgerBooks>;
  /** Each equality that does not hold, as `left != right` with both sides' values. */
  differences: string[];
}

export interface BooksCheck {
  ok: boolean;
  assets: AssetBooks[];
}

const ZERO_RECORDS: RecordBooks = {
  received: new Dec(0),
  undecided: new Dec(0),
  matched: new Dec(0),
  matchedPending: new Dec(0),
  unmatched: new Dec(0),
  returning: new Dec(0),
  returned: new Dec(0),
  credited: new Dec(0),
};
const ZERO_LEDGER: LedgerBooks = {
  received: new Dec(0),
  matched: new Dec(0),
  credited: new Dec(0),
  returned: new Dec(0),
  entries: new Dec(0),
  balance: new Dec(0),
};

const sum = (...values: Dec[]) => values.reduce((s, v) => s.plus(v), new Dec(0));

export async function checkBooks(em: Em, asset?: string): Promise<BooksCheck> {
  // One snapshot for both sides: read apart, ordinary activity between the reads looks like a difference.
  const { records, ledger } = await paymentBooks(em, asset);
  const assets = [...new Set([...records.keys(), ...ledger.keys()])].sort();
  const out = assets.map((a) => {
    const r = records.get(a) ?? ZERO_RECORDS;
    const l = ledger.get(a) ?? ZERO_LEDGER;
    const suspense = sum(r.undecided, r.matchedPending, r.unmatched, r.returning);
    const fmt = (v: Dec) => formatAmount(v, a as AssetCode);
    const differences: string[] = [];
    const same = (what: string, left: Dec, right: Dec) => {
      if (!left.eq(right)) differences.push(`${what}: ${fmt(left)} != ${fmt(right)}`);
    };
    const accounted = sum(r.undecided, r.matched, r.matchedPending, r.unmatched, r.returning, r.returned, r.credited);
    same(
      'records: received = matched + unmatched + returning + returned + credited (+ undecided)',
      r.received,
      accounted,
    );
    same('received: records = ledger', r.received, l.received);
    same('matched by completed deposits: records = ledger', r.matched, l.matched);
    same('credited by operators: records = ledger', r.credited, l.credited);
    same('returned: records = ledger', r.returned, l.returned);
    same('suspense: unmatched + returning (+ undecided, matched pending) = ledger balance', suspense, l.balance);
    same('suspense: ledger entries = ledger balance rows', l.entries, l.balance);
    const show = <T extends object>(books: T) =>
      Object.fromEntries(Object.entries(books).map(([k, v]) => [k, fmt(v as Dec)])) as Books<T>;
    return { asset: a, records: { ...show(r), suspense: fmt(suspense) }, ledger: show(l), differences };
  });
  return { ok: out.every((a) => a.differences.length === 0), assets: out };
}
