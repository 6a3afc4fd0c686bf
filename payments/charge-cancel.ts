// When a deposit's window closes unpaid, the charge it showed is cancelled at its provider, for a rail whose charges
// stay payable otherwise (BOLETO: a boleto is paid until its due date and beyond; docs/decisions/0126). The start of
// the cancel is an outbox row in the batch of the transaction that expires the deposit: no commit without it, and
// no cancel for a deposit that did not expire.
import type { SqlBatch } from '../db/batch';
import type { Operation } from '../db/entities';
import type { Em } from '../db/orm';
import { addWorkflowStart, recordWorkflowStart } from '../db/repositories/outbox';
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

/**
 * Starts, in a short transaction of its own, the cancel of a charge created for a deposit that was never created: its
 * request was refused for good (a quote another request took). Nobody was shown it, but a boleto is registered in
 * the account owner's name, and their bank lists it to them to pay (DDA); paid, it is money for no deposit
 * (docs/decisions/0195). Its activity leaves the charge alone if a deposit carries it after all.
 */
export async function addUnusedChargeCancel(
  em: Em,
  queues: Queues,
  charge: { rail: string; chargeId: string; customerId: string },
): Promise<void> {
  const { rail, chargeId, customerId } = charge;
  if (!railEntry(rail)?.cancelsUnpaidCharges) return;
  await inTransaction(em, (tx) =>
    recordWorkflowStart(tx, queues.taskQueue, {
      workflowId: unusedChargeCancelWorkflowId(rail, chargeId),
      workflowType: 'chargeCancelWorkflow',
      args: [queues.railsTaskQueue, rail, chargeId, { unlessCarried: true }],
      searchAttributes: { CustomerId: customerId },
      summary: `CANCEL ${rail} ${chargeId} of no deposit`,
    }),
  );
}
