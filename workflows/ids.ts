// Workflow ids come from business ids, so a retried start finds the workflow it already started.
export const operationWorkflowId = (operationId: string) => `operation-${operationId}`;
export const accountReviewWorkflowId = (accountId: string, round: number) => `account-review-${accountId}-${round}`;
/**
 * The round an account review workflow decides, read back from its id; undefined for an id not of that shape, so
 * its decision is applied as before rounds were passed rather than compared with NaN and never applied.
 */
export const accountReviewRound = (workflowId: string): number | undefined => {
  const round = /-(\d+)$/.exec(workflowId)?.[1];
  return round === undefined ? undefined : Number(round);
};
export const instructionReviewWorkflowId = (instructionId: string) => `instruction-review-${instructionId}`;
export const webhookDeliveryWorkflowId = (executionLogId: string) => `webhook-delivery-${executionLogId}`;
export const paymentReturnWorkflowId = (returnId: string) => `payment-return-${returnId}`;
export const chargeCancelWorkflowId = (operationId: string) => `charge-cancel-${operationId}`;
/** The cancel of a charge whose deposit was never created: named by the charge, as no operation exists. */
export const unusedChargeCancelWorkflowId = (rail: string, chargeId: string) => `charge-cancel-${rail}-${chargeId}`;
// One workflow per hot wallet of a deployment, the single writer of its nonces: the deployment is named by its main
// task queue, on which the workflow runs and whose database its activity writes (docs/decisions/0142, 0143).
export const hotWalletWorkflowId = (taskQueue: string, chainId: number, address: string) =>
  `hot-wallet:${taskQueue}:${chainId}:${address}`;
/** The update a payout or return sends the hot wallet's workflow for its transfer's nonce (workflows/hot-wallet.ts). */
export const HOT_WALLET_NONCE_UPDATE = 'hotWalletNonce';
/** The update's refusal while a run hands over to the next: its caller asks again, and the next run answers. */
export const HOT_WALLET_ROLLING_OVER = 'HOT_WALLET_ROLLING_OVER';
/** The update failure of a new transfer the wallet's funds do not cover besides those given before it (0221). */
export const HOT_WALLET_SHORT = 'HOT_WALLET_SHORT';
