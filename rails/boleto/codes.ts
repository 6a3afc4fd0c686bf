import { isValidBoleto } from '@brazilian-utils/brazilian-utils';

// A boleto's codes checked against the deposit before the funding instruction leaves (decisions.md, "Boleto through a
// bank's collection API"; docs/decisions/0124). The check digits are the library's (`isValidBoleto` checks the three
// field digits of the 47-digit line, mod 10, and the general digit of the barcode it rebuilds from them, mod 11);
// what only we know, the amount and the due date we asked for, is compared here. Pure: no clock, no HTTP.

const DAY_MS = 86_400_000;
// FEBRABAN's due-date factor: days since 1997-10-07; it reached 9999 on 2025-02-21 and restarted at 1000 on
// 2025-02-22 (the next restart, 9000 days on, is in 2049).
const FACTOR_BASE = Date.UTC(1997, 9, 7);
const FACTOR_RESTART = Date.UTC(2025, 1, 22);

/** The 4-digit due-date factor of a date (YYYY-MM-DD, a calendar day). */
export function dueDateFactor(dueDate: string): string {
  const day = Date.parse(`${dueDate}T00:00:00Z`);
  if (Number.isNaN(day)) throw new Error(`not a date: ${dueDate}`);
  const factor =
    day >= FACTOR_RESTART
      ? 1000 + ((Math.round((day - FACTOR_RESTART) / DAY_MS) % 9000) as number)
      : Math.round((day - FACTOR_BASE) / DAY_MS);
  return String(factor).padStart(4, '0');
}

/** The most a barcode's 10-digit amount field carries: R$ 99.999.999,99. */
export const BARCODE_MAX_AMOUNT = '99999999.99';

/** The barcode's general check digit (position 5) of its other 43 digits: mod 11, weights 2 to 9 from the right. */
export function barcodeCheckDigit(others: string): string {
  let sum = 0;
  for (let i = others.length - 1, w = 2; i >= 0; i--, w = w === 9 ? 2 : w + 1) sum += Number(others[i]) * w;
  const dv = 11 - (sum % 11);
  return String(dv === 0 || dv === 10 || dv === 11 ? 1 : dv);
}

/**
 * A 44-digit barcode of `bank` in reais: check digit, due-date factor, `amount` (`1234.50`, at most
 * BARCODE_MAX_AMOUNT) and the 25-digit free field.
 */
export function barcodeOf(bank: string, dueDate: string, amount: string, freeField: string): string {
  const cents = /^(\d+)\.(\d{2})$/.exec(amount);
  if (!cents || cents[1].length > 8) throw new Error(`not an amount a barcode carries: ${amount}`);
  const rest = dueDateFactor(dueDate) + (cents[1] + cents[2]).padStart(10, '0') + freeField;
  return `${bank}9${barcodeCheckDigit(`${bank}9${rest}`)}${rest}`;
}

/**
 * The 44-digit barcode a 47-digit digitable line spells: bank and currency (line 1-4), general check digit
 * (line 33), factor and amount (line 34-47), then the free field (line 5-9, 11-20, 22-31).
 */
export function barcodeOfLine(line: string): string {
  return line.slice(0, 4) + line.slice(32, 47) + line.slice(4, 9) + line.slice(10, 20) + line.slice(21, 31);
}

/** What the deposit says the boleto must be. */
export interface ExpectedBoleto {
  /** The amount as a decimal string with two places (`1234.50`). */
  amount: string;
  dueDate: string;
}

/** What is wrong with a boleto's codes for the deposit (empty: they agree); each a sentence for the log. */
export function boletoCodeProblems(codes: { barcode: string; digitableLine: string }, want: ExpectedBoleto): string[] {
  const { barcode, digitableLine } = codes;
  if (!/^\d{44}$/.test(barcode)) return ['the barcode is not 44 digits'];
  if (!/^\d{47}$/.test(digitableLine)) return ['the digitable line is not 47 digits'];
  const problems: string[] = [];
  if (!isValidBoleto(digitableLine)) problems.push('a check digit of the digitable line is wrong (mod 10 / mod 11)');
  if (barcodeOfLine(digitableLine) !== barcode) problems.push('the barcode is not the one the digitable line spells');
  if (barcode[3] !== '9') problems.push('the currency is not the real (9)');
  const cents = /^(\d+)\.(\d{2})$/.exec(want.amount);
  if (!cents || barcode.slice(9, 19) !== (cents[1] + cents[2]).padStart(10, '0')) {
    problems.push(`the amount ${barcode.slice(9, 19)} is not the deposit's ${want.amount}`);
  }
  if (barcode.slice(5, 9) !== dueDateFactor(want.dueDate)) {
    problems.push(`the due-date factor ${barcode.slice(5, 9)} is not ${want.dueDate}'s`);
  }
  return problems;
}
