import type { Em } from '../../db/orm';
import { AccountSchema } from '../../db/entities';
import { balancesOf } from '../../db/repositories/ledger';
import { Dec } from '../../domain/money';
import { notFound } from '../errors';
import { amount } from '../../domain/amount';

/** Per asset of the account: available, held (reserved by operations in flight) and their total. */
export async function getBalances(em: Em, accountId: string) {
  const account = await em.findOne(AccountSchema, { id: accountId });
  if (!account) throw notFound('account');
  const rows = new Map((await balancesOf(em, accountId)).map((b) => [b.asset, b]));
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
