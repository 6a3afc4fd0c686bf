import type Koa from 'koa';
import type { Em } from '../../db/orm';
import { requestScopedId } from '../middleware/idempotency';
import { idempotentAroundEffect } from '../middleware/idempotent-effect';

/** Who decides through a sandbox route: the customer, and a decision id fixed by its idempotency key's row. */
export interface SandboxDecider {
  decisionId: string;
  actor: string;
}

/**
 * A sandbox decision route (account, instruction, held withdrawal) under its idempotency key, in three steps
 * (api/middleware/idempotent-effect.ts): the decision commits as a row (`record`); the signal naming it goes and
 * the workflow applies it with no transaction open (`apply`); the answer is read and stored with the key. A request
 * that dies after the first COMMIT is retried with the same key onto the same decision.
 */
export async function sandboxDecision(
  ctx: Koa.Context,
  record: (tx: Em, who: SandboxDecider) => Promise<string | void>,
  apply: (em: Em, decisionId: string) => Promise<unknown>,
  answer: (em: Em) => Promise<unknown>,
): Promise<void> {
  const who = { decisionId: await requestScopedId(ctx, 'decision'), actor: `customer:${ctx.state.customerId}` };
  const requestEm: Em = ctx.state.em;
  await idempotentAroundEffect(
    ctx,
    // The decision to send: this request's, or one recorded before that it takes again (decision 0317).
    async (tx) => (await record(tx, who)) ?? who.decisionId,
    async (decisionId) => {
      await apply(requestEm, decisionId);
    },
    (em) => answer(em),
  );
}
