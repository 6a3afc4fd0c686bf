import { randomBytes, randomUUID } from 'node:crypto';

// The simulator's own ids, in the formats of the SPI: an end-to-end id is E + the ISPB (8 digits) of the paying
// institution + yyyyMMddHHmm + 11 characters, 32 in all; a return's rtrId the same with D.

const ISPB = '99999008';
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function tail(n: number) {
  return [...randomBytes(n)].map((b) => ALNUM[b % ALNUM.length]).join('');
}

function stamp(at: Date) {
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
}

export const endToEndId = (at = new Date()) => `E${ISPB}${stamp(at)}${tail(11)}`;
export const returnId = (at = new Date()) => `D${ISPB}${stamp(at)}${tail(11)}`;
export const locationId = () => randomUUID().replace(/-/g, '');
export const token = () => randomBytes(24).toString('base64url');
