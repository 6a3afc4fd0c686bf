import { createHash, randomUUID } from 'node:crypto';

// PIX ids are ours: the PSP keys its charge, payout and return on them, so the same id sent twice is one thing.
// A retry or a replay must send the same id: a charge's and a payout's are derived from business ids; a return's is
// drawn once and stored with the return before the PSP hears of it.

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A deposit's txid (26-35 of [a-zA-Z0-9]): one per customer, idempotency key and quote, so a retried POST (same
 * key, same body) reuses it, and a key used again once its 24 h are over (a new request, a new quote) gets another.
 */
export function txidFor(customerId: string, idempotencyKey: string, quoteId: string): string {
  return `cb${hex(`deposit:${customerId}:${idempotencyKey}:${quoteId}`).slice(0, 32)}`;
}

/** A withdrawal's idEnvio (1-35 of [a-zA-Z0-9]), from its operation id. */
export function payoutIdFor(operationId: string): string {
  return `cbw${operationId.replace(/-/g, '')}`.slice(0, 35);
}

/**
 * A new return's id (35 of [a-zA-Z0-9]), drawn once when the return is asked and stored with it before the PSP
 * hears of it: every retry and replay of that return sends the stored id, and a later attempt (after the PSP
 * refused one) gets an id of its own.
 */
export function newReturnId(): string {
  return `cbr${randomUUID().replace(/-/g, '')}`;
}
