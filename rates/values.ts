// What every source's translation uses: the one test of a usable rate, and JSON read without JS numbers.
import { Dec } from '../domain/money';

// Digits, an optional fraction, an optional exponent: no sign, no comma, no space, no hex, no Infinity.
const DECIMAL = /^\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * `raw` as a canonical decimal string when it is a positive decimal, else undefined: `0`, `"5,41"`, `-5.4`, `""`, a
 * missing value, a JS number (the source's text was lost) and anything that is not a string are all refused.
 */
export function positiveDecimal(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || !DECIMAL.test(raw)) return undefined;
  const value = new Dec(raw);
  if (!value.isFinite() || !value.gt(0)) return undefined;
  return value.toFixed();
}

/** Why `raw` was refused, for the log line (a value the source sent is shown as it came). */
export function refusalReason(raw: unknown): string {
  if (raw === undefined || raw === null) return 'missing';
  return `not a positive decimal: ${JSON.stringify(raw)}`;
}

/**
 * JSON.parse with every number kept as the text the source wrote (`5.4012` becomes the string "5.4012"): a rate
 * never passes through a binary double. Strings, escapes and structure are left to JSON.parse; only the number
 * tokens outside strings are quoted first.
 */
export function parseJsonKeepingNumbers(text: string): unknown {
  let out = '';
  let i = 0;
  let from = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // Skip the string whole, escapes included.
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      if (m) {
        out += text.slice(from, i) + '"' + m[0] + '"';
        i += m[0].length;
        from = i;
        continue;
      }
    }
    i++;
  }
  return JSON.parse(out + text.slice(from));
}
