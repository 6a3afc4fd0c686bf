import type Koa from 'koa';
import { isUuid } from '../../domain/uuid';

/**
 * Before routing: every path segment that is a UUID (in any case, percent-encoded or not) is rewritten in lower
 * case. An id names workflows, locks, idempotency hashes and signals as text, and Postgres answers a row for either
 * case: `…/ABC…/hold-review` must name what `…/abc…/hold-review` names, not a workflow that does not exist. Trailing
 * slashes of an /api path go too: its router serves `/api/quotes/` as `/api/quotes`, so every check keyed by the
 * path (the idempotency hash, the body limit of a document upload, the public token route) must read one spelling
 * (decision 0198). One place, so no handler has to remember it.
 */
export const canonicalIds: Koa.Middleware = async (ctx, next) => {
  const segments = ctx.path.split('/');
  let changed = false;
  for (let i = 0; i < segments.length; i++) {
    const decoded = decodeSegment(segments[i]);
    if (decoded !== undefined && isUuid(decoded) && decoded.toLowerCase() !== segments[i]) {
      segments[i] = decoded.toLowerCase();
      changed = true;
    }
  }
  // Under /api only: a provider's notice path is served in one exact spelling (api/app.ts), any other is 404.
  while (segments[1] === 'api' && segments.length > 3 && segments[segments.length - 1] === '') {
    segments.pop();
    changed = true;
  }
  if (changed) ctx.path = segments.join('/');
  await next();
};

function decodeSegment(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The body's ids in lower case: every string under a key `id` or ending in `Id` (`accountId`, `quoteId`, a
 * withdrawal's `beneficiary.id` and `paymentInstruction.id`, ...) that is a UUID in any case. The services compare
 * ids as text against the database's lower-case ones, and an upper-case `accountId` was "account not found" for the
 * caller's own account; the request's hash must read one spelling too, or a retry in the other case is 422
 * `IDEMPOTENCY_KEY_REUSED` (decision 0170). Walked without recursion: a body may nest deeper than the stack.
 */
export function lowerCaseBodyIds(body: unknown): void {
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === 'object') pending.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      if (typeof value === 'string') {
        if ((key === 'id' || key.endsWith('Id')) && isUuid(value) && value !== value.toLowerCase())
          record[key] = value.toLowerCase();
      } else if (value !== null && typeof value === 'object') {
        pending.push(value);
      }
    }
  }
}
