// When a deposit's window closes unpaid, the charge it showed is cancelled at its provider, for a rail whose charges
// stay payable otherwise (BOLETO: a boleto is paid until its due date and beyond; docs/decisions/0126). The start of
// the cancel is an outbox row in the batch of the transaction that expires the deposit: no commit without it, and
// no cancel for a deposit that did not expire.
import type { SqlBatch } from '../db/batch';
import type { Operation } from '../db/entities';
import type { Em } from '../db/orm';
import { addWorkflowStart, dropWorkflowStart, recordWorkflowStartAt } from '../db/repositories/outbox';
import { inTransaction } from '../db/transaction';
import { railEntry } from '../rails/registry';
import { chargeCancelWorkflowId, unusedChargeCancelWorkflowId } from '../workflows/ids';

interface Queues {
  taskQueue: string;
  railsTaskQueue: string;
}

/** Adds the cancel of `op`'s charge to `batch`, when its rail cancels unpaid charges and the deposit showed one. */
export function addUnpaidChargeCancel(batch: SqlBatch, op: Operation, queues: Queues): void {
  if (op.type !== 'DEPOSIT') return;
  const instruction = (op.intent.fundingInstruction ?? {}) as Record<string, unknown>;
  const entry = railEntry(String(instruction.rail));
  const chargeId = entry?.cancelsUnpaidCharges ? instruction[entry.chargeField ?? 'txid'] : undefined;
  if (typeof chargeId !== 'string' || !chargeId) return;
  addWorkflowStart(batch, queues.taskQueue, {
    workflowId: chargeCancelWorkflowId(op.id),
    workflowType: 'chargeCancelWorkflow',
    args: [queues.railsTaskQueue, entry!.rail, chargeId],
    searchAttributes: { CustomerId: op.customerId },
    summary: `CANCEL ${entry!.rail} ${chargeId} of deposit ${op.id}`,
  });
}

/** The cancel of a charge no deposit may carry, as its outbox row names it. */
function unusedChargeCancel(queues: Queues, charge: { rail: string; chargeId: string; customerId: string }) {
  const { rail, chargeId, customerId } = charge;
  return {
    workflowId: unusedChargeCancelWorkflowId(rail, chargeId),
    workflowType: 'chargeCancelWorkflow',
    args: [queues.railsTaskQueue, rail, chargeId, { unlessCarried: true }],
    searchAttributes: { CustomerId: customerId },
    summary: `CANCEL ${rail} ${chargeId} of no deposit`,
  };
}

// How long after its quote expires a guarded charge is cancelled: by then no transaction that read the quote unexpired
// can still be running (each statement is cut at DB_STATEMENT_TIMEOUT_MS, 30 s; a deposit's transaction has three).
export const CHARGE_GUARD_MARGIN_MS = 10 * 60_000;

/**
 * Before a deposit's charge is asked of its provider (docs/decisions/0243): for a rail whose charges stay payable, the
 * charge's cancel is recorded in a short transaction of its own, due once the quote has expired (and a margin), so a
 * request that dies, or answers 503 and is never retried, after the provider registered the charge does not leave it
 * payable in the owner's name. The deposit's transaction that carries the charge deletes the row
 * (`dropChargeGuard`); a refusal for good makes it due now (`addUnusedChargeCancel`).
 */
export async function guardCharge(
  em: Em,
  queues: Queues,
  charge: { rail: string; chargeId: string; customerId: string },
  quoteExpiresAt: Date,
): Promise<void> {
  if (!railEntry(charge.rail)?.cancelsUnpaidCharges) return;
  const due = new Date(quoteExpiresAt.getTime() + CHARGE_GUARD_MARGIN_MS);
  await inTransaction(em, (tx) => recordWorkflowStartAt(tx, queues.taskQueue, unusedChargeCancel(queues, charge), due));
}

/** In the deposit's transaction that carries `chargeId`: its guard is pointless now. */
export async function dropChargeGuard(tx: Em, rail: string, chargeId: string): Promise<void> {
  if (railEntry(rail)?.cancelsUnpaidCharges) await dropWorkflowStart(tx, unusedChargeCancelWorkflowId(rail, chargeId));
}

/**
 * Starts, in a short transaction of its own, the cancel of a charge created for a deposit that was never created: its
 * request was refused for good (a quote another request took). Nobody was shown it, but a boleto is registered in
 * the account owner's name, and their bank lists it to them to pay (DDA); paid, it is money for no deposit
 * (docs/decisions/0195). Its activity leaves the charge alone if a deposit carries it after all. The charge's guard
 * (`guardCharge`) is that same row: it is made due now.
 */
export async function addUnusedChargeCancel(
  em: Em,
  queues: Queues,
  charge: { rail: string; chargeId: string; customerId: string },
): Promise<void> {
  if (!railEntry(charge.rail)?.cancelsUnpaidCharges) return;
  await inTransaction(em, (tx) =>
    recordWorkflowStartAt(tx, queues.taskQueue, unusedChargeCancel(queues, charge), new Date()),
  );
}
