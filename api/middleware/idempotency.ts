import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Em } from '../../db/orm';
import { Answer, inKeyedTransaction, KeyedOutcome } from '../../db/keyed-transaction';
import { CambioError } from '../../domain/errors';
import { errorBody, statusOf } from '../errors';
import { keyInUse, keyReused } from '../../services/errors';
import { crashPoint } from '../../services/crash-point';
import { countIdempotentReplay } from '../observability/metrics';
import { isUuid } from '../../domain/uuid';
import { findStoredAnswer, keyStart } from '../../db/repositories/idempotency';
import { openSecret, sealSecret } from '../../webhooks/secrets';

/** Key order must not change the hash: `{a,b}` and `{b,a}` are the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function requireIdempotencyKey(ctx: Koa.Context): string {
  const key = ctx.get('X-Idempotency-Key');
  if (!key)
    throw new CambioError(
      'MISSING_IDEMPOTENCY_KEY',
      'X-Idempotency-Key header (a UUID) is required on POST, PUT and PATCH',
    );
  if (!isUuid(key)) {
    throw new CambioError('VALIDATION_ERROR', 'X-Idempotency-Key must be a UUID', {
      errors: [{ path: '/headers/x-idempotency-key', message: 'must be a UUID' }],
    });
  }
  return key.toLowerCase();
}

/**
 * A UUID fixed by (customer, idempotency key, the instant the key's row was created, purpose): what a handler names a
 * row it must commit before an outside effect (a signal), so that the retry of a request that died after that commit
 * finds its own row instead of writing a second one. The instant (written before the handler runs when the key has no
 * live row: `keyStart`) stays for the key's 24 h and changes when a key is used again after them: that is a new
 * request, and it must not find the rows of the first (decision 0168). Another request under a key whose row is live
 * is 422 IDEMPOTENCY_KEY_REUSED, even when the first stored no answer (it died, or met an outage): it would name the
 * first request's rows and be answered with what the first one did (decision 0194).
 */
export async function requestScopedId(ctx: Koa.Context, purpose: string): Promise<string> {
  const key: string = ctx.state.idempotencyKey;
  const requestHash = requestHashOf(ctx);
  const started = await keyStart(ctx.state.em, key, requestHash);
  if (started.requestHash !== requestHash) throw keyReused();
  const since = started.createdAt;
  const hex = createHash('sha256')
    .update(`${ctx.state.customerId}:${key}:${since.toISOString()}:${purpose}`)
    .digest('hex');
  // Shaped as a version-5-style UUID (name-based), so it passes every uuid column and check.
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  const [a, b, c, d, e] = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(13, 16), hex.slice(17, 20), hex.slice(20, 32)];
  return `${a}-${b}-5${c}-${variant}${d}-${e}`;
}

/** What makes two requests with one key "the same request": method, path and the canonical body. */
export function requestHashOf(ctx: Koa.Context): string {
  return createHash('sha256')
    .update(`${ctx.method} ${ctx.path}\n${canonical(ctx.request.body)}`)
    .digest('hex');
}

/**
 * Fields of a route's answer that carry a secret shown once (a webhook signing secret), and the key that seals them.
 * The answer stored with the idempotency key keeps each such field as `{ sealed }`, encrypted as the secrets are at
 * rest (webhooks/secrets.ts), and a replay opens it: the stored row holds no secret in clear, and the replay is the
 * first answer, byte for byte (decision 0167).
 */
export interface AnswerSecrets {
  fields: readonly string[];
  key: string;
}

type Fields = Record<string, unknown>;
const isFields = (body: unknown): body is Fields => !!body && typeof body === 'object' && !Array.isArray(body);
const isSealed = (value: unknown): value is { sealed: string } => isFields(value) && typeof value.sealed === 'string';

/** The answer as stored: each secret field sealed. The answer itself is left as it is (the first client gets it). */
export function sealAnswer(answer: Answer, secrets: AnswerSecrets | undefined): Answer {
  if (!secrets || !isFields(answer.body)) return answer;
  const body: Fields = { ...answer.body };
  for (const field of secrets.fields) {
    const value = body[field];
    if (typeof value === 'string') body[field] = { sealed: sealSecret(value, secrets.key) };
  }
  return { status: answer.status, body };
}

/** The stored answer as first answered: each sealed secret field opened (an answer stored before 0167 has none). */
export function openAnswer(answer: Answer, secrets: AnswerSecrets | undefined): Answer {
  if (!secrets || !isFields(answer.body)) return answer;
  const body: Fields = { ...answer.body };
  for (const field of secrets.fields) {
    const value = body[field];
    if (isSealed(value)) body[field] = openSecret(value.sealed, secrets.key);
  }
  return { status: answer.status, body };
}

/** Answers a stored response again, marked as a replay. */
export function answerReplay(ctx: Koa.Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.body = body;
  ctx.set('Idempotent-Replayed', 'true');
  countIdempotentReplay();
}

// What the key stores of an error: a business error is the request's answer; a 5xx, a validation error (raised
// before the handler's writes) or a 429 (the customer's backlog is full now) is only this attempt's, and the retry
// with the same key must run the request again.
const NOT_STORED = new Set([
  'INTERNAL_ERROR',
  'RATE_LIMITED',
  'VALIDATION_ERROR',
  'SERVICE_UNAVAILABLE',
  'RATES_UNAVAILABLE',
  'IDEMPOTENCY_KEY_IN_USE',
  'IDEMPOTENCY_KEY_REUSED',
]);

/** The stored answer of a business error; undefined for any other error, which stores nothing. */
export function storedErrorAnswer(err: unknown): Answer | undefined {
  if (!(err instanceof CambioError) || NOT_STORED.has(err.code)) return undefined;
  return { status: statusOf(err.code), body: errorBody(err) };
}

/**
 * Turns what the keyed transaction did into the HTTP answer: a replay, a 409 or a 422 for the key, the business
 * error thrown again (its answer is stored and committed already), or the result for the caller.
 */
export function answerOutcome<T>(ctx: Koa.Context, outcome: KeyedOutcome<T>): T | undefined {
  switch (outcome.kind) {
    case 'busy':
      throw keyInUse();
    case 'reused':
      throw keyReused();
    case 'replay':
      answerReplay(ctx, outcome.answer.status, outcome.answer.body);
      return undefined;
    case 'failed':
      throw outcome.error;
    case 'done':
      return outcome.result;
  }
}

export interface IdempotentOptions {
  log?: Logger;
  /** The answer's secret fields, stored sealed and opened on a replay. */
  secrets?: AnswerSecrets;
}

/**
 * In front of a step that calls a provider (a route's `prepare`): the key's committed answer, read without its lock,
 * is answered now, replayed for the same request or 422 IDEMPOTENCY_KEY_REUSED for another, so neither calls the
 * provider (decision 0168). False when the key holds no answer: the request goes on, and its keyed transaction stays
 * the rule for a duplicate that races this read.
 */
export async function answeredBefore(ctx: Koa.Context, key: string, secrets?: AnswerSecrets): Promise<boolean> {
  const stored = await findStoredAnswer(ctx.state.em, key);
  if (!stored) return false;
  if (stored.requestHash !== requestHashOf(ctx)) throw keyReused();
  const answer = openAnswer({ status: stored.status, body: stored.body }, secrets);
  answerReplay(ctx, answer.status, answer.body);
  return true;
}

/**
 * Runs a mutating handler at most once per (customer, key), in one transaction with its stored answer
 * (db/keyed-transaction.ts): the handler sees that transaction as `ctx.state.em` and answers through `ctx`.
 */
export async function idempotent(
  ctx: Koa.Context,
  key: string,
  handler: () => Promise<void>,
  opts: IdempotentOptions = {},
): Promise<void> {
  const requestEm: Em = ctx.state.em;
  ctx.state.idempotencyKey = key;
  let outcome: KeyedOutcome<Answer>;
  try {
    outcome = await inKeyedTransaction(
      requestEm,
      { key, requestHash: requestHashOf(ctx) },
      async (tx): Promise<Answer> => {
        ctx.state.em = tx;
        await handler();
        // Handlers answer through CambioError; a 5xx set by hand must not commit half a story.
        if (ctx.status >= 500) throw new Error(`handler answered ${ctx.status}`);
        return { status: ctx.status, body: ctx.body };
      },
      {
        answerOf: (answer) => sealAnswer(answer, opts.secrets),
        storedError: storedErrorAnswer,
        beforeCommit: () => crashPoint('before-commit'),
        onRetry: (err, attempt) =>
          opts.log?.warn(
            { err, attempt, requestId: ctx.state.requestId },
            'request transaction retried after a deadlock or serialization failure',
          ),
      },
    );
  } finally {
    ctx.state.em = requestEm;
  }
  crashPoint('after-commit');
  if (outcome.kind === 'replay') outcome = { kind: 'replay', answer: openAnswer(outcome.answer, opts.secrets) };
  answerOutcome(ctx, outcome);
}
