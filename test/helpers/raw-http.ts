import net from 'node:net';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { createHttpServer, HttpTimeouts } from '../../api/overload/http-server';

export interface Listening {
  url: string;
  port: number;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUTS: HttpTimeouts = {
  httpHeadersTimeoutMs: 10_000,
  httpRequestTimeoutMs: 30_000,
  httpKeepAliveTimeoutMs: 5_000,
};

/** The app behind the same HTTP server `api/main.ts` runs, on a free loopback port. */
export async function listen(app: Koa, timeouts: Partial<HttpTimeouts> = {}): Promise<Listening> {
  const server: http.Server = createHttpServer(app, { ...DEFAULT_TIMEOUTS, ...timeouts });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface RawExchange {
  socket: net.Socket;
  /** Everything the server sent, once it closed the connection (or `untilMs` passed). */
  closed: Promise<{ text: string; ms: number; closedByServer: boolean }>;
  /** Resolves with the ms elapsed when the first byte of a response arrives. */
  firstByte: Promise<number>;
}

/** A raw TCP client: writes `head` as is and records what comes back and when the server hangs up. */
export function rawRequest(port: number, head: string, untilMs = 15_000): RawExchange {
  const started = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(head);
  let text = '';
  let gotFirst: (ms: number) => void = () => {};
  const firstByte = new Promise<number>((resolve) => (gotFirst = resolve));
  socket.on('data', (d) => {
    if (text === '') gotFirst(Date.now() - started);
    text += d.toString('latin1');
  });
  const closed = new Promise<{ text: string; ms: number; closedByServer: boolean }>((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, ms: Date.now() - started, closedByServer: false });
    }, untilMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started, closedByServer: true });
    });
  });
  return { socket, closed, firstByte };
}

/** Writes `data` one byte every `everyMs` until the socket closes or the data runs out. */
export function dribble(socket: net.Socket, data: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= data.length) return clearInterval(timer);
    socket.write(data[i++]);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

export const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
