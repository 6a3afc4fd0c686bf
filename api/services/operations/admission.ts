import type { Em } from '../../../db/orm';
import { customerBacklog } from '../../../db/repositories/operation-backlog';
import { CambioError } from '../../../domain/errors';
import { countRejection } from '../../observability/metrics';
import type { ServiceContext } from '../context';

// A Retry-After longer than this says more about a stuck operation at the head of the backlog than about the rate
// it drains at; the client hears "a minute" and asks again.
const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * Admission per customer (docs/decisions.md, "Fair share of the engine"): a customer with
 * `maxPendingOperationsPerCustomer` operations accepted but not yet started gets 429 RATE_LIMITED instead of one
 * more. Checked in the request's transaction from Postgres, so every API process sees the same backlog; concurrent
 * requests of one customer may each see room, so the bound can be passed by at most that customer's requests in
 * flight. Nothing accepted is touched: a refused request wrote nothing, and a retry with the same key runs again.
 *
 * Retry-After by Little's law: the backlog drains at about `count / age of its oldest` operations per second, so a
 * place frees in about `age / count` seconds (at least 1, at most MAX_RETRY_AFTER_SECONDS).
 */
export async function admitOperation(s: ServiceContext, em: Em): Promise<void> {
  const bound = s.config.maxPendingOperationsPerCustomer;
  const backlog = await customerBacklog(em, bound);
  if (backlog.count < bound) return;
  const retryAfterSeconds = Math.min(
    MAX_RETRY_AFTER_SECONDS,
    Math.max(1, Math.ceil(backlog.oldestAgeSeconds / backlog.count)),
  );
  countRejection('backlog');
  throw new CambioError(
    'RATE_LIMITED',
    `${backlog.count} operations of this customer wait to be started (at most ${bound}); retry after ` +
      `${retryAfterSeconds} s`,
    { retryAfterSeconds, pendingOperations: backlog.count },
  );
}
