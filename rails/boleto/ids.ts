import { createHash } from 'node:crypto';

// Our id of a boleto at the bank, `seuNumero` (at most 15 characters): derived from the deposit's charge id (which
// derives from the customer, idempotency key and quote: rails/pix/ids.ts), so the retry of one deposit request asks
// for the same boleto, and the bank's duplicate check (or our read-back by `seuNumero`) finds it again.

const SEU_NUMERO_LENGTH = 15;

/** 15 characters of [0-9A-Z] (77 bits of a SHA-256): no two deposits meet in a lifetime of boletos. */
export function seuNumeroFor(chargeId: string): string {
  const digest = createHash('sha256').update(`boleto:${chargeId}`).digest();
  return BigInt(`0x${digest.subarray(0, 12).toString('hex')}`)
    .toString(36)
    .toUpperCase()
    .padStart(SEU_NUMERO_LENGTH, '0')
    .slice(-SEU_NUMERO_LENGTH);
}
