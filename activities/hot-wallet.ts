// The hot wallet workflow's one step (workflows/hot-wallet.ts), on the rails' task queue like the other CRYPTO
// activities: gives every request the workflow has waiting its nonce, in their order, in one short Postgres
// transaction under the wallet's row lock, or finds the nonce an id was given before
// (db/repositories/crypto-outgoing.ts). Idempotent by each transfer's id, so a retry after a lost answer, or a
// request asked again after a crash, gets the same nonce. A row the database refuses is answered alone (`refused`),
// so one bad request never holds back the others; any other failure fails the batch and is retried.
import { systemEm } from '../db/orm';
import { reserveOutgoingNonces } from '../db/repositories/crypto-outgoing';
import type { NewOutgoingTx, WalletFunds } from '../rails/crypto/nonce-writer';
import type { OutgoingTx } from '../rails/crypto/outgoing-store';
import type { ActivityDeps } from './deps';

/**
 * What a payout or return asks the hot wallet's workflow: its transfer, the chain's count for a first one, and the
 * wallet's funds as read before asking (checked under the row lock; absent in requests made before decision 0221).
 */
export interface HotWalletNonceRequest {
  tx: NewOutgoingTx;
  chainNonce: number;
  funds?: WalletFunds;
}

/**
 * Each request's answer, in the batch's order: its transfer with its nonce, why its row was refused, or why the
 * wallet's funds do not cover it (no nonce taken).
 */
export type HotWalletNonceAnswer = { tx: OutgoingTx } | { refused: string } | { short: string };

export type HotWalletActivities = ReturnType<typeof createHotWalletActivities>;

export function createHotWalletActivities(deps: Pick<ActivityDeps, 'orm'>) {
  return {
    async giveHotWalletNonces(requests: HotWalletNonceRequest[]): Promise<HotWalletNonceAnswer[]> {
      return reserveOutgoingNonces(systemEm(deps.orm), requests);
    },
  };
}
