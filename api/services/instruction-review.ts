import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Em } from '../../db/orm';
import { PaymentInstructionSchema } from '../../db/entities';
import { instructionStatus } from '../../db/repositories/beneficiaries';
import { instructionDecisionSignal, InstructionDecision } from '../../workflows/instruction-review';
import { customerIdKey } from '../../workflows/search-attributes';
import { customerPriority } from '../../workflows/fairness';
import { CambioError, notFound } from '../errors';
import { pollUntil } from './poll';
import type { ServiceContext } from './context';
import { getBeneficiary, instructionReviewStart } from './beneficiaries';

const OUTCOME: Record<InstructionDecision, string> = { APPROVE: 'APPROVED', REJECT: 'REJECTED' };

/**
 * Approves or rejects an instruction that is PENDING_REVIEW (else 409 INVALID_STATE), through its review
 * workflow, and returns the updated Beneficiary. Shared by the sandbox route (tenant `em`) and the operator
 * CLI (a tenant `em` of the instruction's customer).
 */
export async function decideInstruction(
  s: ServiceContext,
  em: Em,
  instructionId: string,
  decision: InstructionDecision,
  reason?: string,
) {
  const pi = await em.findOne(PaymentInstructionSchema, { id: instructionId }, { refresh: true });
  if (!pi) throw notFound('payment instruction');
  if (pi.status !== 'PENDING_REVIEW') throw alreadyDecided(pi.status);
  const start = instructionReviewStart(pi.id, pi.customerId);
  try {
    // With start: the outbox row may not have been relayed yet (the worker's relay has not run, or no worker is up).
    await s.temporal.workflow.signalWithStart(start.workflowType, {
      workflowId: start.workflowId,
      taskQueue: s.config.taskQueue,
      args: start.args,
      signal: instructionDecisionSignal,
      signalArgs: [{ decision, ...(reason !== undefined ? { reason } : {}) }],
      // A closed review is never run again: the decision it applied stands.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [{ key: customerIdKey, value: pi.customerId }],
      priority: customerPriority(pi.customerId),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    throw alreadyDecided(await statusOf(em, instructionId));
  }
  const status = await waitWhilePending(em, instructionId);
  // A concurrent opposite decision reached the workflow first (it takes the first signal only).
  if (status !== 'PENDING_REVIEW' && status !== OUTCOME[decision]) throw alreadyDecided(status);
  return getBeneficiary(em, pi.beneficiaryId);
}

const waitWhilePending = (em: Em, instructionId: string): Promise<string> =>
  pollUntil(
    () => statusOf(em, instructionId),
    (status) => status !== 'PENDING_REVIEW',
  );

const statusOf = async (em: Em, instructionId: string): Promise<string> =>
  (await instructionStatus(em, instructionId)) ?? 'PENDING_REVIEW';

const alreadyDecided = (status: string) =>
  new CambioError(
    'INVALID_STATE',
    `payment instruction is ${status}; only a PENDING_REVIEW instruction can be reviewed`,
    { status },
  );
