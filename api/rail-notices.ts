import type Router from '@koa/router';
import type Koa from 'koa';
import { recordNotice } from '../payments/rail-payments';
import { NoticeRejectedError, RailUnavailableError } from '../rails/errors';
import type { NoticeVerdict } from '../rails/rail';
import { CambioError } from './errors';
import { countRejection } from './observability/metrics';
import { clientAddress } from './overload/token-throttle';
import type { ServiceContext } from './services/context';

// The PSP's notices (docs/decisions.md, "Rails: real money in and out" and "A claim is not money"): outside /api, no
// customer and no token of ours; the secret is the path's token (PIX_WEBHOOK_TOKEN). A notice is a claim: the gate
// below limits the rate and checks the token before a byte of the body is read, the connector checks every item's
// format and reads it back from the PSP, and only what the PSP's own record confirms is recorded, in its words. The
// answer is 200 only once every item is recorded, so a PSP that got anything else sends the notice again, and a
// record per end-to-end id makes that harmless (decision 0107).

export const PIX_NOTICE_PATH = /^\/rails\/pix\/([^/?#]+)\/pix$/;

const isNotice = (ctx: Koa.Context) => ctx.method === 'POST' && PIX_NOTICE_PATH.test(ctx.path);

/**
 * Before the body is read: the notice route's own rate (per client address; `take` answers 0 or the seconds to
 * wait), then the token (constant-time compare in the connector). A refused request is answered 429 or 401 and its
 * body is never parsed (closeIfBodyUnread closes the connection after the answer).
 */
export function railNoticeGate(s: ServiceContext, take: (address: string) => number | Promise<number>): Koa.Middleware {
  return async (ctx, next) => {
    if (!isNotice(ctx)) return next();
    const wait = await take(clientAddress(ctx));
    if (wait > 0) {
      countRejection('rail_notice');
      throw new CambioError('RATE_LIMITED', 'too many PSP notices from this address', { retryAfterSeconds: wait });
    }
    const pix = s.rails?.pix;
    if (!pix) throw new CambioError('NOT_FOUND', 'no PIX rail is configured here');
    try {
      pix.checkNoticeToken(tokenOf(ctx));
    } catch (err) {
      if (!(err instanceof NoticeRejectedError)) throw err;
      s.log.warn({ requestId: ctx.state.requestId }, 'PIX notice with a wrong token: refused, nothing recorded');
      throw new CambioError('UNAUTHORIZED', 'unknown notice token');
    }
    return next();
  };
}

export function railNoticeRoutes(router: Router, s: ServiceContext): void {
  router.post('/rails/pix/:token/pix', async (ctx) => {
    const pix = s.rails?.pix;
    if (!pix) throw new CambioError('NOT_FOUND', 'no PIX rail is configured here');
    const requestId = ctx.state.requestId;
    let verdict: NoticeVerdict;
    try {
      verdict = await pix.verifyNotice(tokenOf(ctx), ctx.request.body, s.config.pix.chargeTimeoutMs);
    } catch (err) {
      if (err instanceof RailUnavailableError) {
        // Nothing is recorded: the PSP sends the notice again, and reconciliation lists what it holds anyway.
        s.log.warn({ requestId, err: err.message }, 'PIX notice not read back (the PSP is unavailable): answered 503');
        throw new CambioError('SERVICE_UNAVAILABLE', 'the PSP could not confirm the notice; send it again later', {
          retryAfterSeconds: err.retryAfterSeconds,
        });
      }
      if (!(err instanceof NoticeRejectedError)) throw err;
      if (err.status === 401) throw new CambioError('UNAUTHORIZED', 'unknown notice token');
      s.log.warn({ requestId, problems: err.problems }, 'malformed PIX notice: refused, nothing recorded');
      throw new CambioError('VALIDATION_ERROR', err.message, {
        errors: err.problems.length ? err.problems : [{ path: '/pix', message: err.message }],
      });
    }
    for (const refused of verdict.refused) {
      s.log.warn({ requestId, ...refused }, 'PIX notice item the PSP does not confirm: refused, nothing recorded');
    }
    const recorded = await recordNotice(s, pix.rail, verdict.confirmed);
    if (verdict.refused.length) {
      // Not 200: not every item is recorded. What the PSP confirmed is recorded (a retry finds it recorded).
      throw new CambioError('NOTICE_NOT_CONFIRMED', 'the PSP does not confirm some items of this notice', {
        received: recorded.length,
        refused: verdict.refused.map((r) => ({
          endToEndId: r.endToEndId,
          reason: 'the PSP does not confirm this Pix (no such endToEndId, or another txid or valor)',
        })),
      });
    }
    ctx.status = 200;
    ctx.body = { received: recorded.length };
  });
}

/**
 * The token as the PSP sent it: `canonicalIds` lower-cases a path segment that looks like a UUID, and a token may
 * be one written in capitals.
 */
function tokenOf(ctx: Koa.Context): string {
  const raw = PIX_NOTICE_PATH.exec(new URL(ctx.originalUrl, 'http://x').pathname)?.[1] ?? ctx.params.token ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
