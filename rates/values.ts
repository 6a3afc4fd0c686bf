// What every source's translation uses: the one test of a usable rate, and JSON read without JS numbers.
import { Dec } from '../domain/money';

// Digits, an optional fraction, an optional exponent: no sign, no comma, no space, no hex, no Infinity.
const DECIMAL = /^\d+(\.\d+)?([eE][+-]?\d+)?$/;

// The range of a usable mid: units of a currency per 1 unit of the answer's base (USD, or EUR for the ECB: within a
// factor of two of each other). The currencies Cambio quotes sit between 0.7 (GBP) and 60 (PHP) per USD, and none in
// use anywhere is below 0.3 (the Kuwaiti dinar) or far above a million (the Iranian rial's market rate), so a value
// outside is a source's error, never the market. Inside, a mid written out has at most 9 digits before the point;
// "1e400000" is 400,001 digits, more than Postgres' numeric holds, and one such value failed the insert of its whole
// answer (decision 0164).
export const MIN_MID = '1e-9';
export const MAX_MID = '1e9';
// Digits past the 40th are never used: every division of a mid rounds there (domain/money.ts, Dec). With the range,
// they also cap a mid at 48 decimals, where numeric holds 16,383.
export const MAX_MID_DIGITS = 40;
// How much of a refused value the log line shows: enough to recognise it, never a whole megabyte.
const SHOWN_CHARS = 64;

const min = new Dec(MIN_MID);
const max = new Dec(MAX_MID);

function shown(raw: unknown): string {
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length <= SHOWN_CHARS ? text : `${text.slice(0, SHOWN_CHARS)}…`;
}

/** A usable mid as a canonical decimal string, or why `raw` is refused. */
function judge(raw: unknown): { mid: string } | { reason: string } {
  if (raw === undefined || raw === null) return { reason: 'missing' };
  // Zero digits before the exponent are a zero, whatever the exponent; other digits are a positive number.
  if (typeof raw !== 'string' || !DECIMAL.test(raw) || !/[1-9]/.test(raw.split(/[eE]/)[0])) {
    return { reason: `not a positive decimal: ${shown(raw)}` };
  }
  // An exponent past decimal.js' own limits reads as Infinity or 0: out of range too.
  const value = new Dec(raw);
  if (!value.isFinite() || value.lt(min) || value.gt(max)) {
    return { reason: `outside ${MIN_MID} .. ${MAX_MID}: ${shown(raw)}` };
  }
  if (value.sd() > MAX_MID_DIGITS) return { reason: `more than ${MAX_MID_DIGITS} significant digits: ${shown(raw)}` };
  return { mid: value.toFixed() };
}

/**
 * `raw` as a canonical decimal string when it is a usable mid, else undefined: a positive decimal string within
 * MIN_MID .. MAX_MID and MAX_MID_DIGITS. `0`, `"5,41"`, `-5.4`, `""`, a missing value, a JS number (the source's text
 * was lost), anything that is not a string, `1e400000` and `1E-400000` are all refused.
 */
export function positiveDecimal(raw: unknown): string | undefined {
  const judged = judge(raw);
  return 'mid' in judged ? judged.mid : undefined;
}

/** Why positiveDecimal refused `raw`, for the log line (a value the source sent is shown as it came, cut if long). */
export function refusalReason(raw: unknown): string {
  const judged = judge(raw);
  return 'reason' in judged ? judged.reason : `not refused: ${shown(raw)}`;
}

/**
 * JSON.parse with every number kept as the text the source wrote (`5.4012` becomes the string "5.4012"): a rate
 * never passes through a binary double. Strings, escapes and structure are left to JSON.parse; only the number
 * tokens outside strings are quoted first.
 */
const NUMBER_TOKEN = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;

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
      // Read in place (sticky), however long the token: a token cut short left its tail outside the quotes, and a
      // number of more than 400 digits made the whole answer unreadable instead of that one value refused.
      NUMBER_TOKEN.lastIndex = i;
      const m = NUMBER_TOKEN.exec(text);
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
