import type Koa from 'koa';
import { CambioError } from '../errors';

// docs/decisions.md: JSON-only bodies, 1 MiB at most (documents carry base64 up to 5 MiB decoded, so the
// documents route raises its own limit).
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Reads a JSON body: 415 for another media type, 413 past the limit, 400 for malformed JSON. */
export function jsonBody(limitFor: (ctx: Koa.Context) => number = () => DEFAULT_BODY_LIMIT): Koa.Middleware {
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method)) return next();
    const length = ctx.request.length;
    const hasBody = (length !== undefined && length > 0) || ctx.get('Transfer-Encoding') !== '';
    if (!hasBody) {
      ctx.request.body = undefined;
      return next();
    }
    if (!ctx.is('application/json')) {
      throw new CambioError('UNSUPPORTED_MEDIA_TYPE', 'request bodies must be application/json');
    }
    const limit = limitFor(ctx);
    if (length !== undefined && length > limit) throw tooLarge(limit);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of ctx.req) {
        size += (chunk as Buffer).length;
        if (size > limit) throw tooLarge(limit);
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof CambioError) throw err;
      // The client went away or the server's request timeout cut it off mid-body: nobody reads this answer.
      throw new CambioError('VALIDATION_ERROR', 'request body ended early', { errors: [{ path: '', message: 'ended before its declared length' }] });
    }
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      ctx.request.body = text.trim() === '' ? undefined : JSON.parse(text);
    } catch {
      throw new CambioError('VALIDATION_ERROR', 'request body is not valid JSON', { errors: [{ path: '', message: 'is not valid JSON' }] });
    }
    return next();
  };
}

const tooLarge = (limit: number) =>
  new CambioError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, { limitBytes: limit });

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
