import type Router from '@koa/router';
import type Koa from 'koa';
import { recordNotice } from '../payments/rail-payments';
import { NoticeRejectedError, RailUnavailableError } from '../rails/errors';
import type { NoticeCapability, NoticeVerdict, RailEntry } from '../rails/rail';
import { CambioError } from '../domain/errors';
import { countRejection } from '../services/metrics';
import { clientAddress } from './overload/token-throttle';
import type { ServiceContext } from '../services/context';

// A provider's notices (decisions 0078, 0107, 0118): outside /api, no customer and no token of ours; the secret is
// the path's token (PIX: PIX_WEBHOOK_TOKEN). One route for every rail, `/rails/{rail}/{token}{suffix}` (rail in
// lower case, the suffix the provider appends: PIX's `/pix`) and the same without the suffix (decision 0261), whose
// connector the registry (rails/registry.ts) gives. A notice is a claim: the gate below limits the rate and checks
// the token before a byte of the body is read, the connector checks every item's format and reads it back from the
// provider, and only what the provider's own record confirms is recorded, in its words. The answer is 200 only once
// every item is recorded, so a provider that got anything else sends the notice again, and a record per end-to-end
// id makes that harmless (decision 0107).

/** Any path under /rails/{rail}/{token}: the rail's slug, the token, and what follows it. */
export const RAIL_NOTICE_PATH = /^\/rails\/([a-z0-9-]+)\/([^/?#]+)(\/[^?#]*)?$/;

interface NoticeTarget {
  entry: RailEntry;
  /** Undefined: the rail has notices but this deployment no provider for it (404). */
  notices?: NoticeCapability;
}

/**
 * What may follow the token: the rail's suffix (PIX's `/pix`, which the PSP appends to its notices), or nothing,
 * the URL as registered, where a PSP POSTs its test of it (Efí, decision 0261) and some PSPs their notices.
 */
const noticeSuffixes = (suffix: string): string[] => (suffix ? [suffix, ''] : ['']);

/** The rail a POST is a notice of: a registered rail that takes notices, at its suffix or at the registered URL. */
function noticeTarget(s: ServiceContext, ctx: Koa.Context): NoticeTarget | undefined {
  if (ctx.method !== 'POST') return undefined;
  const m = RAIL_NOTICE_PATH.exec(ctx.path);
  const entry = m ? s.rails?.bySlug(m[1]) : undefined;
  if (!m || !entry?.notices || !noticeSuffixes(entry.notices.suffix).includes(m[3] ?? '')) return undefined;
  return { entry, notices: s.rails?.connector(entry.rail)?.notices };
}

/** Whether a request is a provider's notice (its body limit is an authenticated request's). */
export const isRailNotice = (s: ServiceContext, ctx: Koa.Context): boolean => noticeTarget(s, ctx) !== undefined;

/**
 * Before the body is read: the notice route's own rate (per client address; `take` answers 0 or the seconds to
 * wait), then the token (constant-time compare in the connector). A refused request is answered 429 or 401 and its
 * body is never parsed (closeIfBodyUnread closes the connection after the answer).
 */
export function railNoticeGate(s: ServiceContext, take: (address: string) => number | Promise<number>): Koa.Middleware {
  return async (ctx, next) => {
    const target = noticeTarget(s, ctx);
    if (!target) return next();
    const wait = await take(clientAddress(ctx));
    if (wait > 0) {
      countRejection('rail_notice');
      throw new CambioError('RATE_LIMITED', 'too many PSP notices from this address', { retryAfterSeconds: wait });
    }
    const { entry, notices } = target;
    if (!notices) throw new CambioError('NOT_FOUND', `no ${entry.transactionType} rail is configured here`);
    try {
      notices.checkNoticeToken(tokenOf(ctx));
    } catch (err) {
      if (!(err instanceof NoticeRejectedError)) throw err;
      s.log.warn(
        { requestId: ctx.state.requestId },
        `${entry.transactionType} notice with a wrong token: refused, nothing recorded`,
      );
      throw new CambioError('UNAUTHORIZED', 'unknown notice token');
    }
    return next();
  };
}

export function railNoticeRoutes(router: Router, s: ServiceContext): void {
  for (const entry of s.rails?.entries ?? []) {
    for (const suffix of entry.notices ? noticeSuffixes(entry.notices.suffix) : [])
      router.post(`/rails/${entry.slug}/:token${suffix}`, (ctx) => notice(s, entry, ctx));
  }
}

async function notice(s: ServiceContext, entry: RailEntry, ctx: Koa.Context): Promise<void> {
  const name = entry.transactionType;
  {
    const notices = s.rails?.connector(entry.rail)?.notices;
    if (!notices) throw new CambioError('NOT_FOUND', `no ${name} rail is configured here`);
    const requestId = ctx.state.requestId;
    let verdict: NoticeVerdict;
    try {
      verdict = await notices.verifyNotice(tokenOf(ctx), ctx.request.body, entry.notices?.timeoutMs(s.config));
    } catch (err) {
      if (err instanceof RailUnavailableError) {
        // Nothing is recorded: the provider sends the notice again, and reconciliation lists what it holds anyway.
        s.log.warn(
          { requestId, err: err.message },
          `${name} notice not read back (the PSP is unavailable): answered 503`,
        );
        throw new CambioError('SERVICE_UNAVAILABLE', 'the PSP could not confirm the notice; send it again later', {
          retryAfterSeconds: err.retryAfterSeconds,
        });
      }
      if (!(err instanceof NoticeRejectedError)) throw err;
      if (err.status === 401) throw new CambioError('UNAUTHORIZED', 'unknown notice token');
      s.log.warn({ requestId, problems: err.problems }, `malformed ${name} notice: refused, nothing recorded`);
      throw new CambioError('VALIDATION_ERROR', err.message, {
        errors: err.problems.length ? err.problems : [{ path: entry.notices!.suffix, message: err.message }],
      });
    }
    for (const refused of verdict.refused) {
      s.log.warn({ requestId, ...refused }, `${name} notice item the PSP does not confirm: refused, nothing recorded`);
    }
    if (!verdict.confirmed.length && !verdict.refused.length) {
      // No Pix claimed: a PSP testing the URL (decision 0261). 200, so it registers it; nothing to record.
      s.log.info({ requestId }, `${name} notice with no payment (a provider's test of the URL): answered 200`);
      ctx.status = 200;
      ctx.body = { received: 0 };
      return;
    }
    const recorded = await recordNotice(s, entry.rail, verdict.confirmed);
    if (verdict.refused.length) {
      // Not 200: not every item is recorded. What the provider confirmed is recorded (a retry finds it recorded).
      throw new CambioError('NOTICE_NOT_CONFIRMED', 'the PSP does not confirm some items of this notice', {
        received: recorded.length,
        refused: verdict.refused.map((r) => ({
          endToEndId: r.endToEndId,
          reason: `the PSP does not confirm this ${name} (no such endToEndId, or another txid or valor)`,
        })),
      });
    }
    ctx.status = 200;
    ctx.body = { received: recorded.length };
  }
}

/**
 * The token as the provider sent it: `canonicalIds` lower-cases a path segment that looks like a UUID, and a
 * token may be one written in capitals.
 */
function tokenOf(ctx: Koa.Context): string {
  const raw = RAIL_NOTICE_PATH.exec(new URL(ctx.originalUrl, 'http://x').pathname)?.[2] ?? ctx.params.token ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
