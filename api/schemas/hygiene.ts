// Input hygiene every request part gets before its route's schema runs, so no route can forget it.
//
// Postgres refuses two kinds of text a JSON string can carry: NUL (a text column rejects byte 0x00, jsonb the
// escape \u0000) and a UTF-16 surrogate without its partner (JSON.stringify writes it as \udXXX, which jsonb
// rejects). Either, let through, would reach the database and answer 500; here they are the client's 400. Nesting is
// bounded too: no schema of ours goes deeper than a handful of levels, and everything that walks a body
// (this walk, Ajv, the idempotency hash) should never meet thousands.
//
// Every text the API takes is one line: a name, an address line, a reason, a filter. What a customer writes there
// reaches statements (PDF, CSV, camt.053), reports, the CLI, operators' logs and webhooks, so characters that can
// forge a line, a column or a terminal's screen, or make two different names look alike, are refused (decision
// 0274): controls, line separators, bidirectional formatting, and invisible characters no script needs. The zero-
// width joiner and non-joiner stay: Persian, the Indic scripts and emoji sequences are written with them.

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. No `u` flag:
// the regex must see code units, not code points.
// eslint-disable-next-line no-control-regex -- matching NUL is the point of this pattern
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

// C0, DEL and C1 controls (tab, CR and LF among them) and the line and paragraph separators.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
// Unicode's Bidi_Control set: the embeddings, overrides and isolates of "Trojan Source" and the three marks.
const BIDI = /\p{Bidi_Control}/u;
// Zero-width space, word joiner, the invisible operators and a byte order mark inside text.
const INVISIBLE = /[\u200b\u2060-\u2064\ufeff]/u;
const DISALLOWED: Array<[RegExp, string]> = [
  [CONTROL, 'control characters'],
  [BIDI, 'bidirectional formatting characters'],
  [INVISIBLE, 'invisible characters'],
];
const DISALLOWED_ALL = new RegExp(DISALLOWED.map(([p]) => p.source).join('|'), 'gu');

/** Deepest nesting a request may have; our deepest schema (a beneficiary's holder address) is 3. */
export const MAX_DEPTH = 16;

export interface UnsafeText {
  /** JSON pointer of the offending value (or of the object holding an offending key). */
  path: string;
  message: string;
}

// Printable ASCII holds none of the characters above (all are controls or beyond U+007F): most of what a request
// carries is checked by this one scan instead of four Unicode-aware ones, on every string of every request.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

// The path is echoed in the error body and the logs, so an offending key is shown with U+FFFD in place of what it
// held.
export const safePointerPart = (key: string) => {
  const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
  return PRINTABLE_ASCII.test(key) ? escaped : escaped.replace(UNSAFE_ALL, '\ufffd').replace(DISALLOWED_ALL, '\ufffd');
};

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function problem(s: string): string | null {
  if (PRINTABLE_ASCII.test(s)) return null;
  const m = UNSAFE.exec(s);
  if (m) return m[0] === '\u0000' ? 'must not contain NUL characters' : 'must not contain unpaired UTF-16 surrogates';
  for (const [pattern, what] of DISALLOWED) {
    const found = pattern.exec(s);
    // The code point, not the character: the message is read in logs and terminals the character could disturb.
    if (found) return `must not contain ${what} (${codePoint(found[0])})`;
  }
  return null;
}

/** The first unsafe string (value or key) in `data`, or nesting past MAX_DEPTH; iterative, so depth is no risk. */
export function findUnsafeText(data: unknown): UnsafeText | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: data, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const message = problem(value);
      if (message) return { path, message };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_DEPTH) return { path, message: `is nested too deeply (at most ${MAX_DEPTH} levels)` };
    for (const [key, child] of Object.entries(value)) {
      const childPath = Array.isArray(value) ? `${path}/${key}` : `${path}/${safePointerPart(key)}`;
      const keyMessage = problem(key);
      if (keyMessage) return { path: childPath, message: `property name ${keyMessage}` };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return null;
}
