import { createHash } from 'node:crypto';

// The end-to-end ids Cambio itself names, all here. A payment that arrives through a rail carries the id its sender
// named (the simulated PSP draws its own, as the bank it stands for would). Each is derived from a business id,
// never drawn at random: the same step run again names the same payment, so a rerun cannot record or send it twice.

/**
 * What a reported payment's rail reference (`endToEndId`) may be, from every reporter (the sandbox route's schema, the
 * operator's `deposit pay`): 1 to 64 letters, digits, `_` or `-`. The reference is the payment's identity, so two
 * spellings of one (a trailing space pasted from a bank statement) would be two payments of the same money.
 */
export const END_TO_END_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

// The participant ISPB in Cambio's return ids (the SPI's 8 digits of the institution that sends the payment).
const CAMBIO_ISPB = '12345678';

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The end-to-end id of an inbound payment's return, in the SPI's format: E + ISPB (8) + yyyyMMddHHmm (UTC, when the
 * return starts) + 11 characters of the payment's id, 32 in all.
 */
export function returnEndToEndId(paymentId: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  return `E${CAMBIO_ISPB}${stamp}${sha256Hex(`return:${paymentId}`).slice(0, 11)}`;
}

/**
 * The end-to-end id of a payment the sandbox reports without one, in the SPI's format (a PIX notice accepts no
 * other, decision 0107): E + ISPB (8) + 12 digits + 11 hex, all drawn from the request's scoped id (the customer,
 * the idempotency key and a purpose), so a retried request names the payment its first attempt recorded. No time
 * in it, for the same reason: the 12 digits stand where the SPI writes yyyyMMddHHmm.
 */
export function sandboxEndToEndId(requestScopedId: string): string {
  const hash = sha256Hex(`sandbox:${requestScopedId}`);
  const digits = (BigInt(`0x${hash.slice(0, 16)}`) % 10n ** 12n).toString().padStart(12, '0');
  return `E${CAMBIO_ISPB}${digits}${hash.slice(16, 27)}`;
}
