// A bench's own HTTP server (a webhook receiver) on a free port of the loopback address.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  /** The URL of `path` on the server. */
  url(path: string): string;
  /** Closes the server and every connection still open on it (a held request included). */
  close(): Promise<void>;
}

/** Starts `server` listening on 127.0.0.1 at a free port. */
export function listenLocally(server: http.Server): Promise<LocalServer> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}
