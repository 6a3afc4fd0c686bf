// Brazilian tax ids: CPF (individuals) and CNPJ (companies), including the alphanumeric CNPJ
// introduced by IN RFB 2.229/2024 (in effect from 2026). Pure functions, no I/O.
export type TaxIdType = 'CPF' | 'CNPJ';

const CPF_BARE = /^\d{11}$/;
const CPF_FORMATTED = /^\d{3}\.\d{3}\.\d{3}-\d{2}$/;
// Alphanumeric CNPJ: 12 positions of [0-9A-Z] (root + branch), then 2 numeric check digits.
// Classic numeric CNPJs are the all-digit subset, so one pattern covers both.
const CNPJ_BARE = /^[0-9A-Z]{12}\d{2}$/;
const CNPJ_FORMATTED = /^[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2}$/;

const CNPJ_DV1_WEIGHTS = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_DV2_WEIGHTS = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];

// Uppercases ASCII letters only. String.prototype.toUpperCase would also map e.g. 'ı' → 'I'
// and 'ſ' → 'S', letting non-ASCII input masquerade as a valid alphanumeric CNPJ.
function asciiUpper(value: string): string {
  return value.replace(/[a-z]/g, (c) => c.toUpperCase());
}

// Receita's rule for both ids: remainder < 2 → 0, otherwise 11 − remainder.
function mod11Digit(values: number[], weights: number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += values[i] * weights[i];
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}

// Character value per the alphanumeric CNPJ spec: ASCII code − 48, so '0'..'9' → 0..9 and
// 'A'..'Z' → 17..42. For digits this is the plain digit value, which keeps old CNPJs valid.
function charValue(c: string): number {
  return c.charCodeAt(0) - 48;
}

// A repeated character passes the mod-11 check for every CPF digit and for CNPJ '0', yet is
// never a real id, so Receita (and every validator in the wild) rejects it explicitly.
function allSameChar(value: string): boolean {
  return value.split('').every((c) => c === value[0]);
}

/** The two CPF check digits for a 9-digit base. Throws on malformed input (it is a fixture helper). */
export function cpfCheckDigits(first9: string): string {
  if (!/^\d{9}$/.test(first9)) throw new RangeError(`CPF base must be 9 digits, got "${first9}"`);
  const values = first9.split('').map(Number);
  const dv1 = mod11Digit(values, [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  const dv2 = mod11Digit([...values, dv1], [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${dv1}${dv2}`;
}

/** The two CNPJ check digits for a 12-character base of [0-9A-Z] (upper case). Throws otherwise. */
export function cnpjCheckDigits(first12: string): string {
  if (!/^[0-9A-Z]{12}$/.test(first12)) {
    throw new RangeError(`CNPJ base must be 12 characters of [0-9A-Z], got "${first12}"`);
  }
  const values = first12.split('').map(charValue);
  const dv1 = mod11Digit(values, CNPJ_DV1_WEIGHTS);
  const dv2 = mod11Digit([...values, dv1], CNPJ_DV2_WEIGHTS);
  return `${dv1}${dv2}`;
}

/**
 * Digits and letters only, upper case: how an owner's tax id is compared (a deposit's `payerTaxId`, a payer a bank
 * names), whatever punctuation it was entered with. Does not validate.
 */
export function bareTaxId(value: string): string {
  return value.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
}

/** Strips `.`, `-`, `/` and whitespace, and uppercases ASCII letters. Does not validate. */
export function normalizeTaxId(_type: TaxIdType, value: string): string {
  // Same rule for both types today; the type parameter keeps call sites explicit should the
  // CPF ever diverge (uppercasing is a no-op on a well-formed CPF).
  return asciiUpper(value.replace(/[.\-/\s]/g, ''));
}

/**
 * Accepts exactly 11 bare digits or the canonical mask `000.000.000-00`. Other spacing or
 * punctuation is rejected rather than guessed at; callers wanting leniency run
 * normalizeTaxId first.
 */
export function isValidCpf(value: string): boolean {
  if (!CPF_BARE.test(value) && !CPF_FORMATTED.test(value)) return false;
  const bare = normalizeTaxId('CPF', value);
  if (allSameChar(bare)) return false;
  return cpfCheckDigits(bare.slice(0, 9)) === bare.slice(9);
}

/**
 * Accepts numeric and alphanumeric CNPJs, bare (14 chars) or in the canonical mask
 * `AA.AAA.AAA/AAAA-00`. Lowercase letters are normalised to upper case before checking:
 * the check-digit values are defined on upper-case ASCII only, and a lowercase rendering of
 * the same id is a presentation difference, not a different id.
 */
export function isValidCnpj(value: string): boolean {
  const upper = asciiUpper(value);
  if (!CNPJ_BARE.test(upper) && !CNPJ_FORMATTED.test(upper)) return false;
  const bare = normalizeTaxId('CNPJ', upper);
  if (allSameChar(bare)) return false;
  return cnpjCheckDigits(bare.slice(0, 12)) === bare.slice(12);
}

export function isValidTaxId(type: TaxIdType, value: string): boolean {
  return type === 'CPF' ? isValidCpf(value) : isValidCnpj(value);
}
