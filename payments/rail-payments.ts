// What a rail's provider says it received (a notice, or reconciliation's list), recorded as inbound payments: one
// record per end-to-end id system-wide, matched to its deposit by the charge id (PIX: the `txid`) or, for a rail
// that matches by payer (TED), by who paid and how much (payer-matching.ts), decided as any
// reported payment is; and the provider's word on returns it lists with the payment (`devolucoes`) settles them.
// Shared by every reporter of a rail so that a payment is the same record whichever brought it first; here rather
// than in api/ so that the worker's reconciliation reaches it too.
import type { Logger } from 'pino';
import { systemEm } from '../db/orm';
import type { InboundPayment } from '../db/entities';
import { findPaymentByReference, paymentOfReturn, returnedOutsideAs } from '../db/repositories/inbound-payments';
import { depositOfCharge } from '../db/repositories/operations';
import { CambioError } from '../domain/errors';
import { Dec } from '../domain/money';
import type { ReceivedPayment } from '../rails/rail';
import { chargeField, railAsset, railEntry } from '../rails/registry';
import type { ChargeField } from '../db/repositories/operations';
import { recordPayerReceipt } from './payer-matching';
import { knownReceipt, requireProviderAmount } from './provider-amount';
import {
  DECISION_DEADLINE_MS,
  decideInboundPayment,
  recordInboundPaymentOnce,
  sendPaymentDecision,
  type SettleContext,
} from './record-and-decide';
import { settleReturn } from './returns';

// A notice's answer waits this long at most for the decision signals that follow its records (milliseconds when all
// is well); past it the signal rows wait for the relay, and the sweep decides what is still RECEIVED. The PSP needs
// only the records, and a PSP whose notice times out sends it again.
export const NOTICE_DECISION_DEADLINE_MS = 3_000;

export interface RecordedReceipt {
  payment: InboundPayment;
  /** False: a notice (or an earlier run) had recorded it already. */
  created: boolean;
  /**
   * What differs from the provider's record: recorded already with another amount or asset (decision 0303), or money
   * of it sent back by a return Cambio did not ask for (0356).
   */
  disagrees?: string;
}

/**
 * Records one received payment in its own transaction (committed when this returns), with its decision row: for the
 * deposit whose charge it paid (matched, or UNMATCHED for that deposit's customer when it no longer takes payments);
 * without a charge of ours, for nobody (UNMATCHED in the platform's suspense). A reference recorded already is that
 * record, whoever's it is: the same payment reported again.
 */
export async function recordReceipt(s: SettleContext, rail: string, p: ReceivedPayment): Promise<RecordedReceipt> {
  // A rail whose payments name no charge of ours (TED) finds the deposit by its payer and amount.
  if (railEntry(rail)?.matchBy === 'payer') return recordPayerReceipt(s, rail, p);
  const em = systemEm(s.orm);
  // A stand-in reference names no payment, whatever an operator recorded under its words (decision 0236).
  const known = p.unnamed ? undefined : await findPaymentByReference(em, rail, p.endToEndId);
  if (known) return knownReceipt(rail, known, p);
  requireProviderAmount(rail, p);
  const field = chargeField(rail) as ChargeField;
  const deposit = p.chargeId ? await depositOfCharge(em, p.chargeId, field) : undefined;
  // Seen for the first time with a return already listed: none of ours (a return needs our record first), so one the
  // provider made itself (a MED return, its portal). Part or all of the money left again: it credits no deposit, and
  // waits in the customer's suspense for an operator (decision 0356).
  const credits = deposit && !returnedElsewhere(p);
  const report = {
    endToEndId: p.endToEndId,
    amount: new Dec(p.amount),
    // The provider's word on the asset, else the rail's (rails/registry.ts).
    asset: p.asset ?? railAsset(rail),
    ...(credits ? { operationId: deposit.id } : { customerId: deposit?.customerId ?? null, rail }),
  };
  try {
    // Its decision row commits with the record: a reporter that dies next leaves the decision to the worker's relay.
    return await recordInboundPaymentOnce(em, report, { taskQueue: s.config.taskQueue, actor: `rail:${rail}` });
  } catch (err) {
    // Recorded meanwhile by another reporter that attributed it otherwise (an operator's `deposit pay` with this
    // reference): the first record stands.
    if (!(err instanceof CambioError && err.code === 'RAIL_REFERENCE_IN_USE')) throw err;
    return knownReceipt(rail, (await findPaymentByReference(em, rail, p.endToEndId))!, p);
  }
}

/** The provider lists a return of `p` that went, or may still go: not one it refused (NAO_REALIZADO). */
const returnedElsewhere = (p: ReceivedPayment): boolean => p.returns.some((r) => r.status !== 'FAILED');

/** One received payment recorded, then decided within `deadlineMs`, and the returns it lists settled. */
export async function recordReceived(
  s: SettleContext,
  rail: string,
  p: ReceivedPayment,
  deadlineMs = DECISION_DEADLINE_MS,
): Promise<RecordedReceipt> {
  const recorded = await recordReceipt(s, rail, p);
  await decideInboundPayment(s, recorded.payment, deadlineMs, `rail:${rail}`);
  const elsewhere = await settleListedReturns(s, rail, p);
  // The money the provider sent back without us is at the provider and in no record of ours (decision 0356).
  const disagrees = [recorded.disagrees, ...elsewhere].filter(Boolean).join('; ');
  return { ...recorded, ...(disagrees ? { disagrees } : {}) };
}

/**
 * A notice's items: every record committed first (in order; the caller answers the PSP only after this returns,
 * and a failure throws so the PSP sends the notice again), then the new ones' decision signals sent within
 * `deadlineMs` and the returns they list settled. The answer does not wait for the deposits' decisions: the PSP
 * needs only the records, and polling for the decisions cost a deposit a dozen reads (decision 0156). A signal not
 * sent by then is the relay's; a record still RECEIVED later, the sweep's.
 */
export async function recordNotice(
  s: SettleContext & { log: Logger },
  rail: string,
  items: ReceivedPayment[],
  deadlineMs = NOTICE_DECISION_DEADLINE_MS,
): Promise<InboundPayment[]> {
  const recorded: InboundPayment[] = [];
  for (const item of items) recorded.push((await recordReceipt(s, rail, item)).payment);
  await Promise.all(
    recorded.map(async (payment, i) => {
      try {
        await sendPaymentDecision(s, payment, Date.now() + deadlineMs, `rail:${rail}`);
        for (const disagrees of await settleListedReturns(s, rail, items[i])) {
          s.log.error({ paymentId: payment.id, status: payment.status, disagrees }, RETURNED_ELSEWHERE);
        }
      } catch (err) {
        // The signal row waits for the relay (the sweep decides what stays RECEIVED); reconciliation lists returns.
        const what =
          'inbound payment recorded; its signal or the returns it lists are left to the relay and reconciliation';
        s.log.warn({ err, paymentId: payment.id }, what);
      }
    }),
  );
  return recorded;
}

const RETURNED_ELSEWHERE = 'the provider sent back money of a payment without Cambio asking; an operator settles it';

/**
 * Returns of ours the provider lists as final (DEVOLVIDO or NAO_REALIZADO) settle their payment, once. Those it
 * lists as made (DEVOLVIDO) that are not ours (a MED return, its portal) are answered, one line each, until an
 * operator records it as the payment's return: the money left, and whatever the payment's record says (credited to a
 * deposit, in a suspense), only an operator can settle it.
 */
export async function settleListedReturns(s: SettleContext, rail: string, p: ReceivedPayment): Promise<string[]> {
  const elsewhere: string[] = [];
  const em = systemEm(s.orm);
  for (const r of p.returns) {
    if (r.status === 'PENDING') continue;
    const payment = await paymentOfReturn(em, r.returnId);
    if (!payment) {
      // A return not ours that went is said, until an operator recorded it as the payment's return (`--outside
      // --reference` its end-to-end id).
      const said =
        r.status === 'RETURNED' && !(r.endToEndId && (await returnedOutsideAs(em, rail, p.endToEndId, r.endToEndId)));
      if (said) {
        elsewhere.push(
          `${p.endToEndId}: its provider shows ${r.amount} sent back by a return Cambio did not ask for` +
            ` (${r.returnId}${r.endToEndId ? `, ${r.endToEndId}` : ''})`,
        );
      }
      continue;
    }
    await settleReturn(s.orm, payment.id, r.returnId, {
      status: r.status === 'RETURNED' ? 'RETURNED' : 'FAILED',
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.endToEndId ? { endToEndId: r.endToEndId } : {}),
    });
  }
  return elsewhere;
}
