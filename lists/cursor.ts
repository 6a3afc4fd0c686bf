// Opaque, tamper-evident pagination cursors.
//
// Format: `<payload>.<signature>`, both base64url without padding, where payload is the JSON
// `{ t: createdAt, i: id, o: 'ASC' | 'DESC', f: filters }` (f: lists/filter-fingerprint.ts, since decision 0275) and
// signature is HMAC-SHA256(secret, scope + "\n" + payload), or HMAC-SHA256(secret, payload) without a scope. The
// scope names the list the cursor was issued for (its customer, its table, its parent: db/repositories/lists.ts
// `listScope`), so a cursor of another customer's list, of another list, or of another subscription's logs does not
// verify there (decision 0182).
// Signing is what lets db/lists/keyset.ts put `t` and `i` into SQL parameters without re-checking that
// the client did not forge a position; the contents are still validated after verification so a
// secret shared with an older encoder cannot smuggle in a malformed timestamp.
//
// `createdAt` is carried verbatim as a string: a JS Date only keeps milliseconds, and a keyset
// position that lost the microseconds Postgres stores would skip or repeat rows.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CambioError } from '../domain/errors';
import { type CursorPosition, isIsoTimestamp, type SortOrder } from '../domain/list-filters';
import { isUuid } from '../domain/uuid';

export type { CursorPosition, SortOrder };

export type CursorSecret = string | Buffer;

interface Payload {
  t: string;
  i: string;
  o: 'ASC' | 'DESC';
  f?: string;
}

// Real cursors are ~200 characters; refusing anything much larger bounds the work done on junk.
const MAX_CURSOR_LENGTH = 1024;
const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(pos: CursorPosition, secret: CursorSecret, scope = ''): string {
  checkSecret(secret);
  // Encoding a position we could not decode later is a bug in the caller, not a client error.
  const problem = positionProblem(pos.createdAt, pos.id, pos.sortOrder);
  if (problem !== null) throw new Error(`cannot encode cursor: ${problem}`);
  const payload: Payload = { t: pos.createdAt, i: pos.id, o: pos.sortOrder === 'ASCENDING' ? 'ASC' : 'DESC' };
  if (pos.filters !== undefined) payload.f = pos.filters;
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${sign(body, secret, scope)}`;
}

export function decodeCursor(cursor: string, secret: CursorSecret, scope = ''): CursorPosition {
  checkSecret(secret);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) {
    invalid('cursor is empty or too long');
  }
  const parts = cursor.split('.');
  if (parts.length !== 2 || !BASE64URL_RE.test(parts[0]) || !BASE64URL_RE.test(parts[1])) {
    invalid('cursor is malformed');
  }
  const [body, signature] = parts;
  // Compare the canonical encodings: Buffer.from(.., 'base64url') ignores stray characters, so
  // comparing decoded bytes would accept several spellings of one signature.
  const expected = Buffer.from(sign(body, secret, scope), 'ascii');
  const given = Buffer.from(signature, 'ascii');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    invalid('cursor signature does not verify (a cursor pages only the list that issued it)');
  }

  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    invalid('cursor payload cannot be decoded');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    invalid('cursor payload is not an object');
  }
  const { t, i, o, f } = payload as Record<string, unknown>;
  if (typeof t !== 'string' || typeof i !== 'string' || (o !== 'ASC' && o !== 'DESC')) {
    invalid('cursor payload has missing or mistyped fields');
  }
  if (f !== undefined && typeof f !== 'string') invalid('cursor payload has missing or mistyped fields');
  const sortOrder: SortOrder = o === 'ASC' ? 'ASCENDING' : 'DESCENDING';
  const problem = positionProblem(t, i, sortOrder);
  if (problem !== null) invalid(`cursor payload is invalid: ${problem}`);
  // A cursor signed before decision 0275 carries no filters: it keeps the meaning it was issued with.
  return f === undefined ? { createdAt: t, id: i, sortOrder } : { createdAt: t, id: i, sortOrder, filters: f };
}

function sign(body: string, secret: CursorSecret, scope: string): string {
  const hmac = createHmac('sha256', secret);
  if (scope) hmac.update(`${scope}\n`, 'utf8');
  return hmac.update(body, 'ascii').digest('base64url');
}

function positionProblem(createdAt: unknown, id: unknown, sortOrder: unknown): string | null {
  if (typeof createdAt !== 'string' || !isIsoTimestamp(createdAt, true)) {
    return 'createdAt must be an ISO 8601 timestamp with a zone';
  }
  if (typeof id !== 'string' || !isUuid(id)) return 'id must be a UUID';
  if (sortOrder !== 'ASCENDING' && sortOrder !== 'DESCENDING') return 'sortOrder must be ASCENDING or DESCENDING';
  return null;
}

// An empty HMAC key would make every cursor forgeable; fail loudly at the first use instead.
function checkSecret(secret: CursorSecret): void {
  if (secret.length === 0) throw new Error('cursor secret must not be empty');
}

function invalid(reason: string): never {
  throw new CambioError('INVALID_CURSOR', `Invalid cursor: ${reason}`);
}
