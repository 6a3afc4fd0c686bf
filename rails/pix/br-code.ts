// The dynamic BR Code ("Pix Copia e Cola") of a charge: EMV QRCPS-MPM, as the BCB's "Manual de Padrões para
// Iniciação do Pix" lays it out. Each field is ID (2 digits) + length (2 digits) + value; the payer's app reads the
// charge at `location` (field 26, sub-field 25) and checks it against the amount shown here.

const GUI = 'br.gov.bcb.pix';
/** The manual's limits: the merchant name and city as a payer's app shows them. */
const MAX_NAME = 25;
const MAX_CITY = 15;
/** Field 26 holds at most 99 characters: the GUI's sub-field takes 18, the location's header 4, leaving 77. */
export const MAX_LOCATION = 77;

/** A charge that no BR Code can carry (its location too long): refused, never encoded cut. */
export class BrCodeError extends Error {
  override readonly name = 'BrCodeError';
}

export interface BrCodeInput {
  /** The charge's `location` as the PSP returned it (a scheme, if it has one, is left out: see brCodeLocation). */
  location: string;
  /** Two decimal places, e.g. "100.00". */
  amount: string;
  merchantName: string;
  merchantCity: string;
}

/** CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR), four upper-case hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function field(id: string, value: string): string {
  if (value.length > 99) throw new Error(`BR Code field ${id} is longer than 99 characters`);
  return `${id}${String(value.length).padStart(2, '0')}${value}`;
}

/** Upper-case ASCII without accents: what every bank app renders the same way. */
function plain(text: string, max: number): string {
  const ascii = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '')
    .trim();
  // Cut, then trimmed again: a name never ends in the space its 25th character happened to be.
  return ascii.slice(0, max).trimEnd() || 'N/A';
}

/**
 * The location as field 25 carries it: without a scheme (the payer's app adds https://, and a PSP that returns
 * one would otherwise push a valid location over the limit). Throws BrCodeError when it is empty or longer than 77.
 */
export function brCodeLocation(location: string): string {
  const bare = location.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  if (bare.length === 0 || bare.length > MAX_LOCATION) {
    throw new BrCodeError(
      `the charge location is ${bare.length} characters without its scheme; a BR Code carries 1 to ${MAX_LOCATION}`,
    );
  }
  return bare;
}

export function encodeBrCode(input: BrCodeInput): string {
  const body =
    field('00', '01') +
    // 12: the code is for one payment (dynamic), not reusable.
    field('01', '12') +
    field('26', field('00', GUI) + field('25', brCodeLocation(input.location))) +
    field('52', '0000') +
    field('53', '986') +
    field('54', input.amount) +
    field('58', 'BR') +
    field('59', plain(input.merchantName, MAX_NAME)) +
    field('60', plain(input.merchantCity, MAX_CITY)) +
    // A dynamic code's txid travels in the charge at `location`; the manual asks for *** here.
    field('62', field('05', '***')) +
    '6304';
  return body + crc16(body);
}

export type BrCodeFields = Record<string, string | Record<string, string>>;

/** Splits a BR Code into its fields (26 and 62 into their sub-fields); throws when the CRC or a length is wrong. */
export function decodeBrCode(code: string): BrCodeFields {
  if (!code.endsWith(crc16(code.slice(0, -4)))) throw new Error('BR Code CRC does not match');
  const fields: BrCodeFields = parse(code);
  for (const nested of ['26', '62']) {
    const value = fields[nested];
    if (typeof value === 'string') fields[nested] = parse(value);
  }
  return fields;
}

function parse(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < text.length) {
    const id = text.slice(at, at + 2);
    const length = Number(text.slice(at + 2, at + 4));
    if (!/^\d{2}$/.test(id) || !Number.isInteger(length) || at + 4 + length > text.length) {
      throw new Error(`BR Code malformed at position ${at}`);
    }
    out[id] = text.slice(at + 4, at + 4 + length);
    at += 4 + length;
  }
  return out;
}
