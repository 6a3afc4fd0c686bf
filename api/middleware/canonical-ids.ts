import type Koa from 'koa';
import { isUuid } from '../../domain/uuid';

/**
 * Before routing: every path segment that is a UUID (in any case, percent-encoded or not) is rewritten in lower
 * case. An id names workflows, locks, idempotency hashes and signals as text, and Postgres answers a row for either
 * case: `…/ABC…/hold-review` must name what `…/abc…/hold-review` names, not a workflow that does not exist. One
 * place, so no handler has to remember it.
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
