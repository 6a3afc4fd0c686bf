import type Koa from 'koa';

/**
 * Calls `done` once the response has been written or its connection closed: a streamed body is written after every
 * middleware has returned, so what it holds (an in-flight slot, a stream slot) is given back here, not on return.
 */
export function whenResponseEnds(ctx: Koa.Context, done: () => void): void {
  if (ctx.res.writableFinished || ctx.res.destroyed) return done();
  ctx.res.once('close', done);
}
