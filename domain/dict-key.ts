// PIX DICT key validation. DICT keys are looked up verbatim, so every type must arrive in its
// canonical form: no masks, no surrounding whitespace. Only the letter case of an EVP or an e-mail key, which means
// nothing, is folded for the caller (dictKeyAsHeld).
import { isValidCnpj, isValidCpf } from './tax-id';
import { isUuid } from './uuid';

export type DictKeyType = 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'EVP';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

// DICT limit for e-mail keys.
const EMAIL_MAX_LENGTH = 77;
// Local part: an RFC 5322 dot-atom, runs of "atext" characters joined by single dots (no dot at either end, no two
// in a row: no mailbox has that address, so a payout to it could only fail).
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// One DNS label: letters, digits and hyphens, never empty, no hyphen at either end (RFC 1123).
const DOMAIN_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$/;
// E.164 with Brazil's country code: 2-digit area code, then an 8-digit landline or 9-digit mobile.
const PHONE = /^\+55[1-9][0-9]\d{8,9}$/;

function isValidEmailKey(key: string): boolean {
  if (key.length > EMAIL_MAX_LENGTH) return false;
  const parts = key.split('@');
  if (parts.length !== 2) return false;
  const [local, domain] = parts;
  if (!EMAIL_LOCAL.test(local)) return false;
  const labels = domain.split('.');
  // At least "example.com": two labels, none empty (rules out "a@.com", "a@b.", "a@b..c").
  return labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label));
}

function isValidPhoneKey(key: string): boolean {
  // The regex alone admits area code 10, which is outside the 11–99 range Anatel assigns.
  return PHONE.test(key) && key.slice(3, 5) !== '10';
}

export function isValidDictKey(type: DictKeyType, key: string): boolean {
  switch (type) {
    case 'CPF':
      // isValidCpf also accepts the masked form; a DICT key must be the 11 bare digits.
      return /^\d{11}$/.test(key) && isValidCpf(key);
    case 'CNPJ':
      // Upper case only: isValidCnpj folds lowercase, but the key itself must be canonical.
      return /^[0-9A-Z]{12}\d{2}$/.test(key) && isValidCnpj(key);
    case 'EMAIL':
      return isValidEmailKey(key);
    case 'PHONE':
      return isValidPhoneKey(key);
    case 'EVP':
      // DICT draws an EVP at random: never the nil UUID, which a client sends for "none" and a payout could only fail.
      return isUuid(key) && key !== NIL_UUID;
    default:
      // Unreachable for typed callers; untyped input (e.g. parsed JSON) must not get `undefined`.
      return false;
  }
}

/**
 * A valid key as DICT holds it, for a new instruction (decision 0263): an EVP or an e-mail key in lower case (the
 * letter case of either means nothing, and the form the PSP looks up is DICT's), the others as they are.
 */
export function dictKeyAsHeld(type: DictKeyType, key: string): string {
  return type === 'EVP' || type === 'EMAIL' ? key.toLowerCase() : key;
}

/** A WALLET instruction's type, stored where a PIX key's type is (decision 0134). */
export const WALLET = 'WALLET';

// An EVP is a UUID, whose hex digits mean the same in either case, and an e-mail key reaches one mailbox however its
// letters are written: compared without case (decision 0239), for rows stored as sent before new ones were stored in
// lower case (decision 0263). The other keys are digits, an E.164 number or a checksummed address.
const CASELESS_KEYS = new Set(['EVP', 'EMAIL']);

/** Whether two keys of type `keyType` are the same key (a WALLET's checksummed addresses compare as they are). */
export function sameDictKey(keyType: string, a: string, b: string): boolean {
  return CASELESS_KEYS.has(keyType) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * Whether a payee's key is the deployment's own receiving key (PIX_RECEIVING_KEY, the key every PIX deposit is paid
 * to and every payout is sent from): no payee, since a payout to it only goes round Cambio's own account (0312).
 */
export function isReceivingKey(
  keyType: string,
  key: string,
  receiving: { receivingKey: string; receivingKeyType: string },
): boolean {
  return keyType === receiving.receivingKeyType && sameDictKey(keyType, key, receiving.receivingKey);
}
