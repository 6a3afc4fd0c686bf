import type Koa from 'koa';
import type { Em } from '../../db/orm';
import { lockKey } from '../../db/repositories/idempotency';
import { inTransaction } from '../../db/transaction';
import { CambioError } from '../errors';
import { answerReplay, idempotent, keyInUse, keyReused, requestHashOf } from './idempotency';

const NOT_STORED = new Set(['IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED', 'VALIDATION_ERROR', 'INTERNAL_ERROR']);

/**
 * The idempotency key's guarantees for a handler that waits for an outside effect (a workflow's answer), without
 * holding a transaction open while it waits (docs/decisions.md, "Inbound payments"):
 *   1. `record` in a short transaction that holds the key's lock: a stored answer is replayed instead (422 for
 *      another request), a live duplicate gets 409; what `record` writes must be keyed so that running it again
 *      finds the first write (the retry of a request that died later).
 *   2. `effect` with no transaction open (it may run again on a retry, so it must be idempotent too).
 *   3. `answer` under `idempotent`, which stores it with the key, or replays what a racing duplicate stored first.
 * A business error of `record` is stored as the key's answer, as any handler's would be.
 */
export async function idempotentAroundEffect<T>(
  ctx: Koa.Context,
  record: (tx: Em) => Promise<T>,
  effect: (recorded: T) => Promise<void>,
  answer: (em: Em, recorded: T) => Promise<unknown>,
): Promise<void> {
  const key: string = ctx.state.idempotencyKey;
  const customerId: string = ctx.state.customerId;
  const em: Em = ctx.state.em;
  let first: { replay: { status: number; body: unknown } } | { recorded: T };
  try {
    first = await inTransaction(em, async (tx) => {
      const lock = await lockKey(tx, customerId, key);
      if (!lock.locked) throw keyInUse();
      if (lock.stored) {
        if (lock.stored.requestHash !== requestHashOf(ctx)) throw keyReused();
        return { replay: { status: lock.stored.status, body: lock.stored.body } };
      }
      return { recorded: await record(tx) };
    });
  } catch (err) {
    if (!(err instanceof CambioError) || NOT_STORED.has(err.code)) throw err;
    return idempotent(ctx, key, async () => {
      throw err;
    });
  }
  if ('replay' in first) return answerReplay(ctx, first.replay.status, first.replay.body);
  const { recorded } = first;
  await effect(recorded);
  await idempotent(ctx, key, async () => {
    ctx.body = await answer(ctx.state.em, recorded);
  });
}
