import * as wf from '@temporalio/workflow';
import type {
  InstructionDecision,
  InstructionReviewActivities,
  InstructionReviewOutcome,
} from '../activities/instruction-review';
import { ignoredSignals, onDecisions } from './decision';

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

/** Obeyed only by reviews started before decisions were rows (their histories must replay); ignored since. */
export const instructionDecisionSignal = wf.defineSignal<[InstructionDecisionRequest]>('instructionDecision');
export const instructionReviewStatusQuery = wf.defineQuery<InstructionReviewStatus>('status');

const { applyInstructionReview } = wf.proxyActivities<InstructionReviewActivities>({ startToCloseTimeout: '30s' });

// Reviews started from here on act only on decisions recorded in the database (workflows/decision.ts).
const DECISIONS_ARE_ROWS = 'instruction-review-decisions-are-rows';

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
  const rowsOnly = wf.patched(DECISIONS_ARE_ROWS);
  const ignore = ignoredSignals();
  wf.setHandler(instructionDecisionSignal, (request) => {
    if (rowsOnly) return ignore('instructionDecision', 'a decision is a recorded row, named by the decision signal');
    decision ??= request;
  });
  onDecisions('INSTRUCTION_REVIEW', ignore, (d) => {
    decision ??= { decision: d.decision ?? 'REJECT', ...(d.reason !== undefined ? { reason: d.reason } : {}) };
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
