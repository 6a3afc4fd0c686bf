// The client side of an outbox row: how a recorded workflow start becomes a running workflow. Shared by the
// worker's relay and the few services that cannot wait for it; not part of the workflow bundle (workflows/index.ts).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  TypedSearchAttributes,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
} from '@temporalio/common';
import type { PendingStart, WorkflowStartRequest } from '../db/repositories/outbox';
import { customerPriority } from './fairness';
import { clampSummary } from '../domain/summaries';

/**
 * Starts (or finds) the workflow of an outbox row. Safe to run twice. `eager` asks the server to hand the
 * workflow's first task straight back to a worker in this process (the client must share that worker's native
 * connection): no trip through the task queue for it.
 */
export async function startWorkflow(
  temporal: Client,
  taskQueue: string,
  req: WorkflowStartRequest,
  opts: { eager?: boolean } = {},
): Promise<void> {
  try {
    await temporal.workflow.start(req.workflowType, {
      taskQueue,
      workflowId: req.workflowId,
      args: req.args,
      requestEagerStart: opts.eager,
      staticSummary: req.summary ? clampSummary(req.summary) : undefined,
      // Its customer's share of the task queue (the outbox writers all set CustomerId).
      priority: customerPriority(req.searchAttributes.CustomerId),
      // Running already: that is the one. Closed already: never run the business twice.
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: new TypedSearchAttributes(
        Object.entries(req.searchAttributes).map(([name, value]) => ({
          key: defineSearchAttributeKey(name, SearchAttributeType.KEYWORD),
          value,
        })),
      ),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** An outbox row as the request `startWorkflow` takes. */
export const startRequestOf = (row: PendingStart): WorkflowStartRequest => ({
  workflowId: row.workflow_id,
  workflowType: row.workflow_type,
  args: row.args,
  searchAttributes: row.search_attributes,
  summary: row.summary,
});
