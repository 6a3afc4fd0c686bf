import { log } from '@temporalio/activity';
import { systemEm } from '../db/orm';
import { decisionById, DecisionKind, paymentRecordedFor } from '../db/repositories/workflow-decisions';
import { isUuid } from '../domain/uuid';
import { crashPoint } from '../services/crash-point';
import type { ActivityDeps } from './deps';

export interface ReadDecision {
  decisionId: string;
  /** The workflow asking: a row recorded for another workflow is not its decision. */
  workflowId: string;
  /** The kind, or the kinds, this workflow takes (a deposit: its replays and the payments it decides). */
  kind: DecisionKind | DecisionKind[];
}

export interface RecordedDecision {
  decisionId: string;
  decision: 'APPROVE' | 'REJECT' | null;
  reason?: string;
  /** Absent in results recorded before payments were decisions (those were the kind asked for). */
  kind?: DecisionKind;
  target?: string;
}

/** How a workflow reads the decisions its signals name (workflows/decision.ts). */
export type DecisionActivities = ReturnType<typeof createDecisionActivities>;

export function createDecisionActivities(deps: ActivityDeps) {
  return {
    /**
     * The committed decision a signal names, or null when there is none for this workflow and kind (a signal made
     * by hand): the workflow then ignores the signal. Read-only, so a retry is harmless.
     */
    async readDecision(input: ReadDecision): Promise<RecordedDecision | null> {
      const row = isUuid(input.decisionId) ? await decisionById(systemEm(deps.orm), input.decisionId) : undefined;
      const kinds: DecisionKind[] = Array.isArray(input.kind) ? input.kind : [input.kind];
      if (!row || row.workflowId !== input.workflowId || !kinds.includes(row.kind)) {
        log.warn('a signal named no recorded decision of this workflow; ignored', { ...input, found: !!row });
        return null;
      }
      crashPoint('after-decision-read');
      const reason = row.reason !== null ? { reason: row.reason } : {};
      return { decisionId: row.id, decision: row.decision, ...reason, kind: row.kind, target: row.target };
    },

    /** Whether a legacy `inboundPayment` signal names a payment recorded for its deposit (else it is ignored). */
    async paymentRecordedFor(input: { operationId: string; paymentId: string }): Promise<boolean> {
      if (!isUuid(input.paymentId) || !isUuid(input.operationId)) return false;
      return paymentRecordedFor(systemEm(deps.orm), input.operationId, input.paymentId);
    },
  };
}
