import type Router from '@koa/router';
import type Koa from 'koa';
import { recordNotice } from '../payments/rail-payments';
import { NoticeRejectedError } from '../rails/errors';
import type { ReceivedPayment } from '../rails/rail';
import { CambioError } from './errors';
import type { ServiceContext } from './services/context';

// The PSP's notices (docs/decisions.md, "Rails: real money in and out"): outside /api, no customer and no token of
// ours; the secret is the path's token (PIX_WEBHOOK_TOKEN), checked by the connector. The answer is 200 only once
// every item is recorded, so a PSP that got anything else sends the notice again, and a record per end-to-end id
// makes that harmless.

export const PIX_NOTICE_PATH = /^\/rails\/pix\/([^/?#]+)\/pix$/;

export function railNoticeRoutes(router: Router, s: ServiceContext): void {
  router.post('/rails/pix/:token/pix', async (ctx) => {
    const pix = s.rails?.pix;
    if (!pix) throw new CambioError('NOT_FOUND', 'no PIX rail is configured here');
    let items: ReceivedPayment[];
    try {
      items = pix.verifyNotice(tokenOf(ctx), ctx.request.body);
    } catch (err) {
      if (!(err instanceof NoticeRejectedError)) throw err;
      if (err.status === 401) {
        s.log.warn({ requestId: ctx.state.requestId }, 'PIX notice with a wrong token: refused, nothing recorded');
        throw new CambioError('UNAUTHORIZED', 'unknown notice token');
      }
      throw new CambioError('VALIDATION_ERROR', err.message, { errors: [{ path: '/pix', message: err.message }] });
    }
    const recorded = await recordNotice(s, pix.rail, items);
    ctx.status = 200;
    ctx.body = { received: recorded.length };
  });
}

/**
 * The token as the PSP sent it: `canonicalIds` lower-cases a path segment that looks like a UUID, and a token may
 * be one written in capitals.
 */
function tokenOf(ctx: Koa.Context): string {
  const raw = PIX_NOTICE_PATH.exec(new URL(ctx.originalUrl, 'http://x').pathname)?.[1] ?? ctx.params.token;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
