import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** When the connection of this request closed (answered, or dropped by the sender), epoch ms. */
  closedAt?: number;
}

/** What the receiver does with one request: answer a status (after a delay), or hang past the timeout. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** The answer waits for this too (then `delayMs`): the test says when the receiver answers. */
  until?: Promise<unknown>;
  /** The answer's body ('ok' when absent). */
  body?: string;
}

/**
 * A real webhook receiver on 127.0.0.1 (port 0). Replies are taken from `script` in order, then `fallback`.
 */
export class Receiver {
  readonly received: Received[] = [];
  script: Reply[] = [];
  fallback: Reply = { status: 200 };
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      this.received.push(received);
      const reply = this.script.shift() ?? this.fallback;
      let timer: NodeJS.Timeout | undefined;
      let closed = false;
      void Promise.resolve(reply.until).then(() => {
        if (closed) return;
        timer = setTimeout(() => {
          res.writeHead(reply.status ?? 200, reply.headers ?? {});
          res.end(reply.body ?? 'ok');
        }, reply.delayMs ?? 0);
      });
      res.on('close', () => {
        closed = true;
        received.closedAt = Date.now();
        clearTimeout(timer);
      });
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A port nothing listens on: bind one, note it, close it. */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hooks`;
}
