// A body's shape read from its text before JSON.parse builds it (decision 0360). The hygiene walk refuses nesting past
// MAX_DEPTH after parsing, and Ajv lists every problem; but JSON.parse took 165 ms over 200 KB of nested brackets, and
// a body of 60,000 unknown properties cost 1.1 s of the API's one thread and a 2.7 MB list of errors: sixteen such
// requests of one customer at once held every other customer's requests for seconds and then ran the 128 MB heap out.
// Counted here in one pass (a string skipped with indexOf), refused in about a millisecond.

import { MAX_DEPTH } from '../schemas/hygiene';
import { CLOSE_ARRAY, CLOSE_OBJECT, closingQuote, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './repeated-names';

/** Most values a body may hold; the largest of ours (an account with its owners) holds a few hundred. */
export const MAX_BODY_VALUES = 5000;

/** What is wrong with the shape of the JSON `text` (nesting past MAX_DEPTH, more than `maxValues`), or null. */
export function bodyShapeProblem(text: string, maxValues = MAX_BODY_VALUES): string | null {
  let depth = 0;
  let values = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) i = closingQuote(text, i);
    else if (ch === OPEN_OBJECT || ch === OPEN_ARRAY) {
      if (++depth > MAX_DEPTH) return `is nested too deeply (at most ${MAX_DEPTH} levels)`;
    } else if (ch === CLOSE_OBJECT || ch === CLOSE_ARRAY) depth--;
    // Each comma outside a string starts one more value of an array or one more property of an object.
    else if (ch === COMMA && ++values > maxValues) return `holds too many values (at most ${maxValues})`;
  }
  return null;
}
