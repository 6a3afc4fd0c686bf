import type { Em } from '../db/orm';
import { AccountSchema } from '../db/entities';
import { balancesAsOf, balancesOf } from '../db/repositories/ledger';
import { isoMicros, parseInstant } from '../domain/report-period';
import { Dec } from '../domain/money';
import { notFound, validationError } from '../domain/errors';
import { amount } from '../domain/amount';
import { READ_MAX_WAIT_MS, untilBookedBefore } from './booked-before';

/**
 * Per asset of the account: available, held (reserved by operations in flight) and their total; with `asOf`, as they
 * stood at that instant (every posting booked before it, none after), the same answer at any later time.
 */
export async function getBalances(em: Em, accountId: string, asOf?: string) {
  const at = asOf === undefined ? undefined : pastInstant('asOf', asOf);
  const account = await em.findOne(AccountSchema, { id: accountId });
  if (!account) throw notFound('account');
  // Read once every posting booked before the instant has committed: an answer given while one was still open would
  // change when it commits (decision 0187).
  if (at !== undefined) await untilBookedBefore(em, at, { maxWaitMs: READ_MAX_WAIT_MS });
  const read = at === undefined ? balancesOf(em, accountId) : balancesAsOf(em, accountId, at);
  const rows = new Map((await read).map((b) => [b.asset, b]));
  const assets = [...new Set([...account.assets.map((a) => a.asset), ...rows.keys()])];
  return {
    accountId,
    balances: assets.map((asset) => {
      const row = rows.get(asset);
      const available = row?.available ?? new Dec(0);
      const held = row?.held ?? new Dec(0);
      return {
        asset,
        available: amount(available, asset),
        held: amount(held, asset),
        total: amount(available.plus(held), asset),
      };
    }),
  };
}

/** An instant given by the client, as a timestamptz literal with every microsecond; the future is refused. */
export function pastInstant(name: string, value: string): string {
  const instant = parseInstant(name, value);
  if (instant.micros > BigInt(Date.now()) * 1000n) {
    throw validationError(`/query/${name}`, 'must not be in the future');
  }
  return isoMicros(instant.micros);
}
