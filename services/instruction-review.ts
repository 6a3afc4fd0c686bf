import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Em } from '../db/orm';
import { PaymentInstructionSchema } from '../db/entities';
import { instructionStatus } from '../db/repositories/beneficiaries';
import type { InstructionDecision } from '../workflows/instruction-review';
import { CambioError, notFound } from '../domain/errors';
import { inTransaction } from '../db/transaction';
import { checkReason, MAX_DECISION_REASON_LENGTH } from '../domain/states';
import { pollUntil } from './poll';
import type { ServiceContext } from './context';
import { getBeneficiary, instructionReviewStart } from './beneficiaries';
import { recordDecision, sendDecision } from './decisions';

/**
 * Records a decision on an instruction that is PENDING_REVIEW (else 409 INVALID_STATE) in `tx`, as a row its
 * review workflow will read (services/decisions.ts); the id of the decision to send (the one recorded before, when
 * this one takes it again). Shared by the sandbox route (tenant `tx`) and the operator CLI (a tenant `tx` of the
 * instruction's customer).
 */
export async function recordInstructionDecision(
  s: Pick<ServiceContext, 'config'>,
  tx: Em,
  instructionId: string,
  request: { decision: InstructionDecision; reason?: string },
  who: { decisionId: string; actor: string },
): Promise<string> {
  checkReason(request.reason, MAX_DECISION_REASON_LENGTH);
  return recordDecision(s, tx, who.decisionId, instructionId, who.actor, async () => {
    const pi = await tx.findOne(
      PaymentInstructionSchema,
      { id: instructionId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!pi) throw notFound('payment instruction');
    if (pi.status !== 'PENDING_REVIEW') throw alreadyDecided(pi.status);
    // With its start: the review's own outbox row may not have been relayed yet (no worker up, or not yet); and a
    // review closed by hand (terminated) before any decision runs again to take this one (decision 0315).
    const start = { ...instructionReviewStart(pi.id, pi.customerId), rerunIfStopped: true };
    return {
      kind: 'INSTRUCTION_REVIEW',
      workflowId: start.workflowId,
      customerId: pi.customerId,
      decision: request.decision,
      reason: request.reason,
      start,
    };
  });
}

/** After COMMIT: the signal naming the decision, then the wait until the workflow applied it. */
export async function applyInstructionDecision(
  s: Pick<ServiceContext, 'orm' | 'temporal' | 'config'>,
  em: Em,
  instructionId: string,
  decisionId: string,
): Promise<void> {
  await sendDecision(s, decisionId);
  await pollUntil(
    () => statusOf(em, instructionId),
    (status) => status !== 'PENDING_REVIEW',
  );
}

/** The Beneficiary holding the instruction, as it stands. */
export async function beneficiaryOfInstruction(em: Em, instructionId: string) {
  const pi = await em.findOne(PaymentInstructionSchema, { id: instructionId }, { refresh: true });
  if (!pi) throw notFound('payment instruction');
  return getBeneficiary(em, pi.beneficiaryId);
}

/** The operator CLI's decision: recorded in a transaction of its own, sent, and the updated Beneficiary. */
export async function decideInstruction(
  s: ServiceContext,
  em: Em,
  instructionId: string,
  request: { decision: InstructionDecision; reason?: string },
  actor: string,
) {
  const who = { decisionId: randomUUID(), actor };
  const decisionId = await inTransaction(em, (tx) => recordInstructionDecision(s, tx, instructionId, request, who));
  await applyInstructionDecision(s, em, instructionId, decisionId);
  return beneficiaryOfInstruction(em, instructionId);
}

const statusOf = async (em: Em, instructionId: string): Promise<string> =>
  (await instructionStatus(em, instructionId)) ?? 'PENDING_REVIEW';

const alreadyDecided = (status: string) =>
  new CambioError(
    'INVALID_STATE',
    `payment instruction is ${status}; only a PENDING_REVIEW instruction can be reviewed`,
    { status },
  );
