// The hot wallet workflow's one step (workflows/hot-wallet.ts), on the rails' task queue like the other CRYPTO
// activities: gives a transfer the wallet's next nonce in Postgres, in one short transaction under the wallet's row
// lock, or finds the nonce its id was given before (db/repositories/crypto-outgoing.ts). Idempotent by the
// transfer's id, so a retry after a lost answer, or a request asked again after a crash, gets the same nonce.
import { systemEm } from '../db/orm';
import { reserveOutgoingNonce } from '../db/repositories/crypto-outgoing';
import type { NewOutgoingTx } from '../rails/crypto/nonce-writer';
import type { OutgoingTx } from '../rails/crypto/outgoing-store';
import type { ActivityDeps } from './deps';

/** What a payout or return asks the hot wallet's workflow: its transfer, and the chain's count for a first one. */
export interface HotWalletNonceRequest {
  tx: NewOutgoingTx;
  chainNonce: number;
}

export type HotWalletActivities = ReturnType<typeof createHotWalletActivities>;

export function createHotWalletActivities(deps: Pick<ActivityDeps, 'orm'>) {
  return {
    async giveHotWalletNonce({ tx, chainNonce }: HotWalletNonceRequest): Promise<OutgoingTx> {
      return reserveOutgoingNonce(systemEm(deps.orm), tx, chainNonce);
    },
  };
}
