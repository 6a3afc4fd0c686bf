// A JSON object that names a property twice (`{"value":"1.00","value":"50.00"}`) means one thing to JSON.parse (the
// last) and another to a gateway, a log or a client library that keeps the first: a payment of 1.00 to one reader is
// 50.00 to the other. RFC 8259 4 leaves such a body's meaning unpredictable, so the API refuses it (decision 0266).
// A query string can name a parameter twice as well; that is refused here too (decision 0276).

import { CambioError } from '../../domain/errors';
import { safePointerPart } from '../schemas/hygiene';

/** The JSON punctuation the text scans read (this one and api/middleware/body-shape.ts), as char codes. */
export const [QUOTE, COMMA, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY] = [...'",{}[]'].map((c) =>
  c.charCodeAt(0),
);

type Frame = { names: Set<string>; name?: string; expectsName: boolean } | { index: number };

/**
 * The JSON pointer of the first property named a second time in its object, or undefined when none is. `text` must
 * be valid JSON (it is read after JSON.parse took it): the scan then only tells names from values. Linear and without
 * recursion: a string is skipped with indexOf, so a 7 MiB document upload costs little.
 */
export function firstRepeatedName(text: string): string | undefined {
  const frames: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charCodeAt(i);
    const top = frames[frames.length - 1];
    if (ch === QUOTE) {
      const end = closingQuote(text, i);
      if (top && 'names' in top && top.expectsName) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.names.has(name)) return pointerOf(frames.slice(0, -1), name);
        top.names.add(name);
        top.name = name;
        top.expectsName = false;
      }
      i = end + 1;
      continue;
    }
    if (ch === OPEN_OBJECT) frames.push({ names: new Set(), expectsName: true });
    else if (ch === OPEN_ARRAY) frames.push({ index: 0 });
    else if (ch === CLOSE_OBJECT || ch === CLOSE_ARRAY) frames.pop();
    else if (ch === COMMA && top) {
      if ('names' in top) top.expectsName = true;
      else top.index++;
    }
    i++;
  }
  return undefined;
}

/** The index of the quote that closes the string opened at `open` (one not escaped by an odd run of backslashes). */
export function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let backslashes = 0;
    while (text[at - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

function pointerOf(frames: Frame[], name: string): string {
  const parts = frames.map((f) => ('names' in f ? (f.name ?? '') : String(f.index)));
  return [...parts, name].map((p) => `/${safePointerPart(p)}`).join('');
}

/**
 * A query parameter given twice (`?limit=10&limit=20`) is the same ambiguity in a query string: Koa reads it as an
 * array, which no parameter of ours is, and the schema's `must be integer` sent the client looking at a value that
 * was fine. It is named instead (decision 0276), before the route's query schema runs.
 */
export function refuseRepeatedQueryParameters(query: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(query)) {
    if (!Array.isArray(value)) continue;
    const path = `/query/${safePointerPart(name)}`;
    throw new CambioError('VALIDATION_ERROR', `${path} is given more than once`, {
      errors: [{ path, message: 'is given more than once' }],
    });
  }
}
