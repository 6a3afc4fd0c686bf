import { createHash, randomUUID } from 'node:crypto';

// PIX ids are ours: the PSP keys its charge, payout and return on them, so the same id sent twice is one thing.
// Each is derived from a business id, never drawn at random, so a retry or a replay sends the same id.

const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** A deposit's txid (26-35 of [a-zA-Z0-9]): one per customer and idempotency key, so a retried POST reuses it. */
export function txidFor(customerId: string, idempotencyKey: string): string {
  return `cb${hex(`deposit:${customerId}:${idempotencyKey}`).slice(0, 32)}`;
}

/** A withdrawal's idEnvio (1-35 of [a-zA-Z0-9]), from its operation id. */
export function payoutIdFor(operationId: string): string {
  return `cbw${operationId.replace(/-/g, '')}`.slice(0, 35);
}

/** A return's id (1-35 of [a-zA-Z0-9]), from the inbound payment it returns and its attempt number. */
export function returnIdFor(paymentId: string, attempt = 1): string {
  return `cbr${hex(`return:${paymentId}:${attempt}`).slice(0, 32)}`;
}

/**
 * A new return's id (35 of [a-zA-Z0-9]), drawn once when the return is asked and stored with it before the PSP
 * hears of it: every retry and replay of that return sends the stored id, and a later attempt (after the PSP
 * refused one) gets an id of its own.
 */
export function newReturnId(): string {
  return `cbr${randomUUID().replace(/-/g, '')}`;
}
