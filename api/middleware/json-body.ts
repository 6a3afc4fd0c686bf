import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { CambioError } from '../../domain/errors';
import { lowerCaseBodyIds } from './canonical-ids';
import { bodyShapeProblem, MAX_BODY_VALUES } from './body-shape';
import { firstRepeatedName } from './repeated-names';
import type { BodyTurn } from '../overload/large-bodies';

// Decision 0015: JSON-only bodies, 1 MiB at most (documents carry base64 up to 5 MiB decoded, so the
// documents route raises its own limit).
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads a JSON body: 415 for another media type or a content coding, 413 past the limit, 400 for malformed JSON,
 * bytes not UTF-8, a shape no route takes (too deep, too many values) or a property named twice in one object.
 */
export function jsonBody(
  limitFor: (ctx: Koa.Context) => number = () => DEFAULT_BODY_LIMIT,
  valuesFor: (ctx: Koa.Context) => number = () => MAX_BODY_VALUES,
  takeTurn: BodyTurn = () => undefined,
): Koa.Middleware {
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method)) return next();
    const length = ctx.request.length;
    const hasBody = (length !== undefined && length > 0) || ctx.get('Transfer-Encoding') !== '';
    if (!hasBody) {
      ctx.request.body = undefined;
      return next();
    }
    // A compressed body would be read as its compressed bytes ("not valid UTF-8", or a body taken as plain that said
    // it was not): a content coding is refused as RFC 9110 15.5.16 asks, naming the one we read (decision 0334).
    const coding = ctx.get('Content-Encoding').trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') {
      ctx.set('Accept-Encoding', 'identity');
      throw new CambioError('UNSUPPORTED_MEDIA_TYPE', 'request bodies must not be content-coded (Content-Encoding)');
    }
    if (!ctx.is('application/json')) {
      throw new CambioError('UNSUPPORTED_MEDIA_TYPE', 'request bodies must be application/json');
    }
    const limit = limitFor(ctx);
    if (length !== undefined && length > limit) throw tooLarge(limit);
    // A large body waits for its turn before a byte of it is read, and holds it until answered (decision 0362); one
    // sent chunked counts as the limit.
    const turn = takeTurn(ctx, length ?? limit);
    if (turn === undefined) {
      ctx.request.body = await readJson(ctx.req, limit, valuesFor(ctx));
      return next();
    }
    const release = await turn;
    try {
      ctx.request.body = await readJson(ctx.req, limit, valuesFor(ctx));
      await next();
    } finally {
      release();
    }
  };
}

/** The body's JSON, ids in lower case; 400 for bytes not UTF-8, a shape no route takes, bad JSON or a name twice. */
async function readJson(req: IncomingMessage, limit: number, maxValues: number): Promise<unknown> {
  const text = utf8Text(await readBody(req, limit));
  const shape = bodyShapeProblem(text, maxValues);
  if (shape) throw new CambioError('VALIDATION_ERROR', `body ${shape}`, { errors: [{ path: '', message: shape }] });
  let body: unknown;
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    throw new CambioError('VALIDATION_ERROR', 'request body is not valid JSON', {
      errors: [{ path: '', message: 'is not valid JSON' }],
    });
  }
  const repeated = firstRepeatedName(text);
  if (repeated !== undefined) {
    throw new CambioError('VALIDATION_ERROR', `${repeated} is given more than once`, {
      errors: [{ path: repeated, message: 'is given more than once' }],
    });
  }
  lowerCaseBodyIds(body);
  return body;
}

/**
 * The body's bytes, with listeners rather than `for await` (an async iterator and a promise per chunk cost a POST
 * more CPU than its JSON). Past `limit` reading stops: the 413 goes out and the connection closes after it
 * (closeIfBodyUnread). A body that ends early (client gone, the server's request timeout) is a 400 nobody reads.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      req.off('data', onData).off('end', onEnd).off('error', onEndedEarly).off('close', onClose);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else
        settle(() => {
          req.pause();
          reject(tooLarge(limit));
        });
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks, size)));
    const onEndedEarly = () =>
      settle(() =>
        reject(
          new CambioError('VALIDATION_ERROR', 'request body ended early', {
            errors: [{ path: '', message: 'ended before its declared length' }],
          }),
        ),
      );
    const onClose = () => {
      if (!req.complete) onEndedEarly();
    };
    req.on('data', onData).on('end', onEnd).on('error', onEndedEarly).on('close', onClose);
  });
}

// Fatal: a byte sequence that is not UTF-8 is refused rather than read as U+FFFD, which would be stored in place of
// what the client meant (a Latin-1 `é`). A byte order mark is dropped, as RFC 8259 8.1 lets a parser do. Whatever
// `charset` the Content-Type names, JSON is UTF-8 (RFC 8259 8.1, 11): decision 0265.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function utf8Text(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new CambioError('VALIDATION_ERROR', 'request body is not valid UTF-8', {
      errors: [{ path: '', message: 'is not valid UTF-8' }],
    });
  }
}

const tooLarge = (limit: number) =>
  new CambioError('PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, { limitBytes: limit });

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
