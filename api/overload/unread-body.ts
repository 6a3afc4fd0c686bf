import type Koa from 'koa';

/**
 * A request answered before its body was read (401 at the gate, 413 from Content-Length, 429) leaves that body
 * on the socket. Keeping the connection would mean reading and discarding it, up to the declared length; closing
 * it after the answer costs the client one reconnect. Runs inside the error renderer, so it sees thrown errors.
 */
export const closeIfBodyUnread: Koa.Middleware = async (ctx, next) => {
  try {
    await next();
  } finally {
    const declaresBody = (ctx.request.length ?? 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    if (declaresBody && !ctx.req.complete) ctx.set('Connection', 'close');
  }
};
