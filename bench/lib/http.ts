// A small keep-alive JSON client on node:http (lighter per request than fetch, which matters when the load
// generator shares two cores with the API, the worker, Temporal and Postgres).
import http from 'node:http';
import { randomUUID } from 'node:crypto';

export interface JsonResponse<T = any> {
  status: number;
  body: T;
  headers: http.IncomingHttpHeaders;
}

export class JsonClient {
  private readonly agent: http.Agent;
  private readonly url: URL;

  constructor(base: string, opts: { maxSockets?: number; headers?: Record<string, string> } = {}) {
    this.url = new URL(base);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 64 });
    this.headers = opts.headers ?? {};
  }

  headers: Record<string, string>;

  /**
   * One request. A kept-alive socket that the server closed as idle just as we reused it fails with ECONNRESET
   * before anything was sent on it: that request is sent again once, with the same headers (so the same
   * idempotency key), as Node's documentation advises for this race.
   */
  request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonResponse<T>> {
    return this.send<T>(method, path, body, headers).catch((err: Error & { code?: string; reusedSocket?: boolean }) => {
      if (err.code === 'ECONNRESET' && err.reusedSocket) return this.send<T>(method, path, body, headers);
      throw err;
    });
  }

  private send<T>(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<JsonResponse<T>> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.url.hostname,
          port: this.url.port,
          method,
          path,
          agent: this.agent,
          headers: {
            accept: 'application/json',
            ...this.headers,
            ...headers,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: res.headers });
          });
          res.on('error', reject);
        },
      );
      req.on('error', (err: Error & { reusedSocket?: boolean }) => {
        err.reusedSocket = req.reusedSocket;
        reject(err);
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, undefined, headers);
  }

  /** POST with a fresh X-Idempotency-Key, as every Cambio mutation needs. */
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, body, { 'x-idempotency-key': randomUUID(), ...headers });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Throws with the status and body unless the response has `status`. */
export function expectStatus<T>(res: JsonResponse<T>, status: number, what: string): T {
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
  return res.body;
}
