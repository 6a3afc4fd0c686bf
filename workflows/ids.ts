// Workflow ids come from business ids, so a retried start finds the workflow it already started.
export const operationWorkflowId = (operationId: string) => `operation-${operationId}`;
export const accountReviewWorkflowId = (accountId: string) => `account-review-${accountId}`;
export const instructionReviewWorkflowId = (instructionId: string) => `instruction-review-${instructionId}`;
