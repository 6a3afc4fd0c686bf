import { LockMode } from '@mikro-orm/core';
import { instructionEventPayload } from '../webhooks/beneficiary-event';
import { BeneficiarySchema, PaymentInstructionSchema } from '../db/entities';
import { recordEvent } from '../db/repositories/events';
import { CambioError } from '../domain/errors';
import { transition } from '../domain/states';
import type { ActivityDeps } from './deps';
import { inActivityTransaction } from './failures';

export type InstructionDecision = 'APPROVE' | 'REJECT';
export type InstructionReviewOutcome = 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED';

export interface ApplyInstructionReview {
  instructionId: string;
  decision: InstructionDecision;
  reason?: string;
}

// The reason a rejected instruction carries when the reviewer gave none.
const DEFAULT_REJECTION = 'rejected by compliance';

/** A payment instruction's review, applied (workflows/instruction-review.ts). */
export type InstructionReviewActivities = ReturnType<typeof createInstructionReviewActivities>;

export function createInstructionReviewActivities(deps: ActivityDeps) {
  return {
    /**
     * Moves a PENDING_REVIEW instruction to APPROVED or REJECTED and records the matching event, in one
     * transaction. Retried after a crash past COMMIT it finds the instruction decided and only reports it.
     */
    async applyInstructionReview(input: ApplyInstructionReview): Promise<InstructionReviewOutcome> {
      return inActivityTransaction(deps.orm, async (em) => {
        const pi = await em.findOne(
          PaymentInstructionSchema,
          { id: input.instructionId },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!pi) throw new CambioError('NOT_FOUND', `payment instruction ${input.instructionId} not found`);
        if (pi.status !== 'PENDING_REVIEW') return pi.status;
        const b = await em.findOneOrFail(BeneficiarySchema, { id: pi.beneficiaryId });
        const now = new Date();
        const approved = input.decision === 'APPROVE';
        const reason = approved
          ? undefined
          : { code: 'INSTRUCTION_REJECTED', message: input.reason ?? DEFAULT_REJECTION, details: {} };
        transition(pi, approved ? 'APPROVED' : 'REJECTED', now, reason);
        // The beneficiary's representation lists its instructions, so it changed too.
        b.updatedAt = now;
        await recordEvent(em, deps.config, {
          customerId: pi.customerId,
          type: approved ? 'BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED' : 'BENEFICIARY_PAYMENT_INSTRUCTION_REJECTED',
          resourceType: 'BENEFICIARY',
          resourceId: pi.id,
          payload: instructionEventPayload(b, pi, now),
          dedupeKey: `${pi.id}:${pi.status}`,
          atTime: now,
        });
        return pi.status;
      });
    },
  };
}
