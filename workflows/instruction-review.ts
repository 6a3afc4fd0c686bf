import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { InstructionDecision, InstructionReviewOutcome } from '../activities/instruction-review';

export type { InstructionDecision } from '../activities/instruction-review';

export interface InstructionDecisionRequest {
  decision: InstructionDecision;
  reason?: string;
}

export interface InstructionReviewInput {
  instructionId: string;
  customerId: string;
}

export type InstructionReviewStatus = 'PENDING_REVIEW' | 'APPLYING_DECISION' | InstructionReviewOutcome;

export const instructionDecisionSignal = wf.defineSignal<[InstructionDecisionRequest]>('instructionDecision');
export const instructionReviewStatusQuery = wf.defineQuery<InstructionReviewStatus>('status');

const { applyInstructionReview } = wf.proxyActivities<Activities>({ startToCloseTimeout: '30s' });

/**
 * One per payment instruction, started with it: waits, without a deadline, for a compliance decision
 * (operator CLI or sandbox route) and applies it. The first decision wins; later signals are ignored, and
 * the service that sent them reports the instruction's actual state.
 */
export async function instructionReviewWorkflow(
  input: InstructionReviewInput,
): Promise<{ instructionId: string; status: InstructionReviewStatus }> {
  let status: InstructionReviewStatus = 'PENDING_REVIEW';
  let decision: InstructionDecisionRequest | undefined;
  wf.setHandler(instructionReviewStatusQuery, () => status);
  wf.setHandler(instructionDecisionSignal, (request) => {
    decision ??= request;
  });

  await wf.condition(() => decision !== undefined);
  const { decision: verdict, reason } = decision!;
  status = 'APPLYING_DECISION';
  // The activity answers with the instruction's state, which is already final if it was decided elsewhere.
  status = await applyInstructionReview({
    instructionId: input.instructionId,
    decision: verdict,
    ...(reason !== undefined ? { reason } : {}),
  });
  return { instructionId: input.instructionId, status };
}
