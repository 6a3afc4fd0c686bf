import type { Account } from '../../../db/entities';
import { CambioError } from '../../../domain/errors';

/** An asset can move on an account once onboarding activated it there. */
export function requireAssetEnabled(account: Account, asset: string): void {
  const entry = account.assets.find((a) => a.asset === asset);
  if (!entry || entry.status !== 'ACTIVE') {
    throw new CambioError('ASSET_NOT_ENABLED', `${asset} is not enabled on account ${account.id}`, {
      accountId: account.id,
      asset,
    });
  }
}
