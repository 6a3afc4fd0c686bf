// Workflow ids come from business ids, so a retried start finds the workflow it already started.
export const operationWorkflowId = (operationId: string) => `operation-${operationId}`;
export const accountReviewWorkflowId = (accountId: string, round: number) => `account-review-${accountId}-${round}`;
export const instructionReviewWorkflowId = (instructionId: string) => `instruction-review-${instructionId}`;
export const webhookDeliveryWorkflowId = (executionLogId: string) => `webhook-delivery-${executionLogId}`;
export const paymentReturnWorkflowId = (returnId: string) => `payment-return-${returnId}`;
export const chargeCancelWorkflowId = (operationId: string) => `charge-cancel-${operationId}`;
