import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

export interface DrainOptions {
  /** Keep accepting (readiness already 503) this long before closing the port. */
  delayMs: number;
  /** In-flight requests get this long to finish; then their connections are cut. */
  graceMs: number;
  log: Logger;
}

/**
 * Stops an HTTP server the way a load balancer expects: stop accepting, let every request already accepted get
 * its real answer, close keep-alive connections as they fall idle (a response sent while draining carries
 * `Connection: close`), and cut whatever is left after the grace period. Resolves true when nothing was cut.
 */
export async function drainServer(server: Server, opts: DrainOptions): Promise<boolean> {
  server.on('request', (_req, res) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  });
  if (opts.delayMs > 0) await sleep(opts.delayMs);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const deadline = Date.now() + opts.graceMs;
  let done = false;
  void closed.then(() => {
    done = true;
  });
  while (!done && Date.now() < deadline) {
    // A keep-alive connection becomes idle once its response is out; close it before a new request arrives.
    server.closeIdleConnections();
    await Promise.race([closed, sleep(50)]);
  }
  if (done) return true;
  opts.log.warn(
    { graceMs: opts.graceMs },
    'requests still running after the shutdown grace period; closing their connections',
  );
  server.closeAllConnections();
  await closed;
  return false;
}
