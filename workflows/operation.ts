// The operation workflow (type `operationWorkflow`, id `operation-${id}`): one per operation, its state machine from
// REQUESTED to COMPLETED or FAILED. What each kind does lives in workflows/operations/, one file per kind; the
// messages it takes in workflows/operations/contract.ts.
import * as wf from '@temporalio/workflow';
import { statusQuery, type OperationWorkflowInput } from './operations/contract';
import { TrackedStatus } from './operations/database-steps';
import { depositOperation } from './operations/deposit';
import { swapOrTransferOperation } from './operations/swap-and-transfer';
import { withdrawalOperation } from './operations/withdrawal';

// Its hold decision, as the service that records one names it.
export type { HoldDecision } from './operations/contract';

// Operations started from here on take hold decisions and replays only as recorded rows (workflows/decision.ts).
const DECISIONS_ARE_ROWS = 'operation-decisions-are-rows';

/** One workflow per operation (id `operation-${id}`): the operation's state machine. */
export async function operationWorkflow(input: OperationWorkflowInput): Promise<string> {
  const op = new TrackedStatus(input.operationId);
  wf.setHandler(statusQuery, () => op.status);
  const rowsOnly = wf.patched(DECISIONS_ARE_ROWS);
  switch (input.type) {
    case 'DEPOSIT':
      return depositOperation(input, op, rowsOnly);
    case 'WITHDRAWAL':
      return withdrawalOperation(input, op, rowsOnly);
    case 'SWAP':
    case 'TRANSFER':
      return swapOrTransferOperation(input, op, rowsOnly);
  }
}
