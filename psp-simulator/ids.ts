import { randomBytes, randomUUID } from 'node:crypto';

// The simulator's own ids, in the formats of the SPI: an end-to-end id is E + the ISPB (8 digits) of the paying
// institution + yyyyMMddHHmm + 11 characters, 32 in all; a return's rtrId the same with D.

const ISPB = '99999008';
// The SPI allows [a-zA-Z0-9] in the tail; lower-case hex is a subset that reads well in logs.
export function tail(n: number) {
  return randomBytes(n).toString('hex').slice(0, n);
}

function stamp(at: Date) {
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
}

export const endToEndId = (at = new Date()) => `E${ISPB}${stamp(at)}${tail(11)}`;
export const returnId = (at = new Date()) => `D${ISPB}${stamp(at)}${tail(11)}`;
export const locationId = () => randomUUID().replace(/-/g, '');
export const token = () => randomBytes(24).toString('base64url');
