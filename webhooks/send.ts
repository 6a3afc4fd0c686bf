import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Agent, errors, request } from 'undici';
import { Webhook } from 'standardwebhooks';

export interface WebhookMessage {
  messageId: string;
  eventType: string;
  /** The exact body, sent as is on every attempt. */
  payload: string;
}

export interface AttemptOutcome {
  /** 0 when no response came back. */
  httpStatus: number;
  ok: boolean;
  error: string | null;
  /** Seconds a 429 or 503 asked us to wait. */
  retryAfterSeconds?: number;
  /** The first RESPONSE_BODY_KEPT_BYTES of the answer, as text (null when none came back). */
  responseBody?: string | null;
  /** From the request's start to its outcome. */
  durationMs?: number;
}

// Receivers answer with whatever they like; we only need to know the status, so at most this much is read.
const MAX_RESPONSE_BYTES = 64 * 1024;
// What an attempt keeps of the answer (Svix keeps a truncated response too): enough for an error message.
export const RESPONSE_BODY_KEPT_BYTES = 1024;

/**
 * The Standard Webhooks headers, signed by the `standardwebhooks` library. Each secret signs; the newest comes
 * first, so during a rotation's overlap a receiver on either secret verifies (the signature header is a
 * space-separated list).
 */
export function signedHeaders(message: WebhookMessage, secrets: string[], at: Date): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(message.messageId, at, message.payload));
  return {
    'content-type': 'application/json',
    'user-agent': 'Cambio-Webhooks/1',
    'x-event-type': message.eventType,
    'x-message-id': message.messageId,
    'webhook-id': message.messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

/**
 * One POST. Redirects are not followed (a 3xx is a failure). When `address` is given the connection goes to
 * that address, the one the URL rules checked, whatever the name resolves to by now (no DNS rebinding); TLS
 * still verifies the certificate against the host name.
 */
export async function postWebhook(input: {
  url: URL;
  address?: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Aborts the request when the attempt is cancelled (its activity's cancellation signal). */
  cancelled?: AbortSignal;
}): Promise<AttemptOutcome> {
  const dispatcher = new Agent({
    connect: { timeout: input.timeoutMs, ...(input.address ? { lookup: pinnedLookup(input.address) } : {}) },
    headersTimeout: input.timeoutMs,
    bodyTimeout: input.timeoutMs,
    // One connection per attempt: nothing of one receiver's connection outlives its attempt.
    pipelining: 0,
  });
  // Whichever comes first ends the request: its timeout, or the attempt's cancellation (a heartbeat timeout, the
  // workflow cancelled). No retry may start while this request is still open.
  const timeout = AbortSignal.timeout(input.timeoutMs);
  const signal = input.cancelled ? AbortSignal.any([timeout, input.cancelled]) : timeout;
  const started = performance.now();
  const duration = () => Math.round(performance.now() - started);
  try {
    const res = await request(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.body,
      dispatcher,
      signal,
      maxRedirections: 0,
    });
    const responseBody = await readHead(res.body).catch(() => null);
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const retryAfter =
      res.statusCode === 429 || res.statusCode === 503 ? parseRetryAfter(res.headers['retry-after']) : undefined;
    return {
      httpStatus: res.statusCode,
      ok,
      error: ok
        ? null
        : res.statusCode >= 300 && res.statusCode < 400
          ? `redirect (HTTP ${res.statusCode}) not followed`
          : `HTTP ${res.statusCode}`,
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
      responseBody,
      durationMs: duration(),
    };
  } catch (err) {
    const error = input.cancelled?.aborted
      ? 'cancelled: the attempt was stopped before a response came back'
      : describeFailure(err, input.timeoutMs);
    return { httpStatus: 0, ok: false, error, responseBody: null, durationMs: duration() };
  } finally {
    void dispatcher.destroy().catch(() => undefined);
  }
}

/**
 * The first RESPONSE_BODY_KEPT_BYTES of a body as text, then the rest read and dropped up to MAX_RESPONSE_BYTES.
 * NUL is dropped: Postgres text cannot hold it.
 */
async function readHead(body: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
  const kept: Buffer[] = [];
  let size = 0;
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (size < RESPONSE_BODY_KEPT_BYTES) {
      const part = Buffer.from(chunk).subarray(0, RESPONSE_BODY_KEPT_BYTES - size);
      kept.push(part);
      size += part.length;
    }
    if (read >= MAX_RESPONSE_BYTES) break;
  }
  return Buffer.concat(kept).toString('utf8').replaceAll(String.fromCharCode(0), '');
}

function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

/** Seconds from `Retry-After` (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number.parseInt(v.trim(), 10);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** A short, secret-free reason for the log: what went wrong on the wire. */
function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (
    e?.name === 'TimeoutError' ||
    e?.name === 'AbortError' ||
    err instanceof errors.HeadersTimeoutError ||
    err instanceof errors.BodyTimeoutError ||
    err instanceof errors.ConnectTimeoutError
  ) {
    return `timeout: no response within ${timeoutMs / 1000} s`;
  }
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? e?.cause?.message ?? 'request failed';
  return code ? `network error (${code}): ${message}` : `network error: ${message}`;
}
