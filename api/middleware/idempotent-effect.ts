import type Koa from 'koa';
import type { Em } from '../../db/orm';
import { inKeyedTransaction } from '../../db/keyed-transaction';
import { answerOutcome, idempotent, requestHashOf, storedErrorAnswer } from './idempotency';

/**
 * The idempotency key's guarantees for a handler that waits for an outside effect (a workflow's answer), without
 * holding a transaction open while it waits (decision 0047), in two keyed transactions
 * (db/keyed-transaction.ts) around the effect:
 *   1. `record`, under the key: a stored answer is replayed instead (422 for another request), a live duplicate
 *      gets 409, a business error is stored as the key's answer; a success stores nothing yet, so what `record`
 *      writes must be keyed so that running it again finds the first write (the retry of a request that died later).
 *   2. `effect` with no transaction open (it may run again on a retry, so it must be idempotent too).
 *   3. `answer` under `idempotent`, which stores it with the key, or replays what a racing duplicate stored first.
 * Between 1 and 3 no database lock marks the key as taken. This process marks it itself (`keysInEffect`), so a
 * duplicate that reaches it meanwhile is 409, as the key's advisory lock answers it during 1 and 3. A duplicate sent
 * to another API process still runs: it finds what the first recorded, and both answer the same record.
 */
export async function idempotentAroundEffect<T>(
  ctx: Koa.Context,
  record: (tx: Em) => Promise<T>,
  effect: (recorded: T) => Promise<void>,
  answer: (em: Em, recorded: T) => Promise<unknown>,
): Promise<void> {
  const key: string = ctx.state.idempotencyKey;
  const taken = `${ctx.state.customerId}:${key}`;
  if (keysInEffect.has(taken)) return void answerOutcome(ctx, { kind: 'busy' });
  keysInEffect.add(taken);
  try {
    const outcome = await inKeyedTransaction(ctx.state.em, { key, requestHash: requestHashOf(ctx) }, record, {
      storedError: storedErrorAnswer,
    });
    if (outcome.kind !== 'done') return void answerOutcome(ctx, outcome);
    const recorded = outcome.result;
    await effect(recorded);
    await idempotent(ctx, key, async () => {
      ctx.body = await answer(ctx.state.em, recorded);
    });
  } finally {
    keysInEffect.delete(taken);
  }
}

/** (customer, key) of the requests of this process that are inside `idempotentAroundEffect`. */
const keysInEffect = new Set<string>();
