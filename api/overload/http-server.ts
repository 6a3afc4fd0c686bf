import http from 'node:http';
import type Koa from 'koa';
import type { Config } from '../../config';

export type HttpTimeouts = Pick<Config, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs'>;

/**
 * The API's HTTP server with timeouts that end slow clients in seconds: the headers within
 * `httpHeadersTimeoutMs`, the whole request (body included) within `httpRequestTimeoutMs`, an idle keep-alive
 * connection after `httpKeepAliveTimeoutMs`. Node checks the first two on a timer whose period can only be
 * given when the server is created (30 s by default, which would let a dribbling client live for 40 s), hence
 * `createServer` here rather than `app.listen`.
 */
export function createHttpServer(app: Koa, timeouts: HttpTimeouts): http.Server {
  const server = http.createServer(
    {
      headersTimeout: timeouts.httpHeadersTimeoutMs,
      requestTimeout: timeouts.httpRequestTimeoutMs,
      keepAliveTimeout: timeouts.httpKeepAliveTimeoutMs,
      // Node answers an HTTP/1.1 request without Host with a bare 400 before the app sees it; the app answers it in
      // the error shape, with its request id and version (api/middleware/host-required.ts).
      requireHostHeader: false,
      // Check often enough that a timeout ends within a fraction of itself.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(timeouts.httpHeadersTimeoutMs / 4))),
    },
    // Koa's callback answers through `res` and handles its own errors; the promise it returns carries nothing.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    app.callback(),
  );
  // A socket silent this long while its response is being written (a client that stopped reading) is dropped.
  server.setTimeout(timeouts.httpRequestTimeoutMs * 2);
  return server;
}
