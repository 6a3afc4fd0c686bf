// What a rail's provider says it received (a PIX notice's items; reconciliation's list reads the same shape), turned
// into inbound payment records: one per end-to-end id system-wide, matched to its deposit by the charge it paid.
// Here rather than in api/ so that the worker's reconciliation reaches it too.
import type { Logger } from 'pino';
import type { InboundPayment } from '../db/entities';
import { systemEm } from '../db/orm';
import { findPaymentByReference } from '../db/repositories/inbound-payments';
import { depositOfCharge } from '../db/repositories/operations';
import { CambioError } from '../domain/errors';
import { Dec } from '../domain/money';
import type { ReceivedPayment } from '../rails/rail';
import { decideInboundPayment, recordInboundPayment, type SettleContext } from './record-and-decide';

// A notice's answer waits this long at most for the decisions that follow its records (a decision signal each,
// milliseconds when all is well); past it the records stay RECEIVED and the sweep decides them. The PSP needs only
// the records, and a PSP whose notice times out sends it again.
export const NOTICE_DECISION_DEADLINE_MS = 3_000;

/** PIX pays in BRL only. */
const RAIL_ASSET: Record<string, string> = { PIX_KEY: 'BRL' };

/**
 * Records one received payment in its own transaction (committed when this returns): for the deposit whose charge
 * it paid (by txid: a closed deposit's payment becomes UNMATCHED for its customer when decided), or, without a
 * charge or with one Cambio never issued, for nobody (the platform's suspense, UNMATCHED for an operator). A
 * reference already recorded gives that record, whoever's it is: the same payment reported again.
 */
export async function recordReceived(s: SettleContext, rail: string, p: ReceivedPayment): Promise<InboundPayment> {
  const em = systemEm(s.orm);
  const deposit = p.chargeId ? await depositOfCharge(em, p.chargeId) : undefined;
  const amount = new Dec(p.amount);
  const asset = RAIL_ASSET[rail];
  const report = deposit
    ? { endToEndId: p.endToEndId, amount, asset, operationId: deposit.id, rail }
    : { endToEndId: p.endToEndId, amount, asset, customerId: null, rail };
  try {
    // Its decision row commits with the record: a notice handler or a reconciliation run that dies next leaves the
    // decision to the worker's relay, not to the sweep.
    return await recordInboundPayment(em, report, { taskQueue: s.config.taskQueue, actor: `rail:${rail}` });
  } catch (err) {
    // Recorded already for another customer (an operator's `deposit pay` with this reference): it stays theirs.
    if (!(err instanceof CambioError) || err.code !== 'RAIL_REFERENCE_IN_USE') throw err;
    return (await findPaymentByReference(systemEm(s.orm), rail, p.endToEndId))!;
  }
}

/**
 * A notice's items: every record committed first (in order; the caller answers the PSP only after this returns,
 * and a failure throws so the PSP sends the notice again), then the new ones decided within `deadlineMs`.
 */
export async function recordNotice(
  s: SettleContext & { log: Logger },
  rail: string,
  items: ReceivedPayment[],
  deadlineMs = NOTICE_DECISION_DEADLINE_MS,
): Promise<InboundPayment[]> {
  const recorded: InboundPayment[] = [];
  for (const item of items) recorded.push(await recordReceived(s, rail, item));
  await Promise.all(
    recorded
      .filter((p) => p.status === 'RECEIVED')
      .map((p) =>
        decideInboundPayment(s, p, deadlineMs, `rail:${rail}`).catch((err: unknown) =>
          s.log.warn({ err, paymentId: p.id }, 'inbound payment recorded, not decided yet: the sweep decides it'),
        ),
      ),
  );
  return recorded;
}
