// Where a hot wallet transfer stands (./transfers.ts), as the payouts and returns read it (./payouts.ts).
export type TransferStatus = 'PENDING' | 'COMPLETED' | 'FAILED';

export interface TransferState {
  status: TransferStatus;
  /** The transaction's hash, once signed. */
  hash?: `0x${string}`;
  nonce?: number;
  reason?: string;
}
