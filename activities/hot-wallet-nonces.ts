// The CRYPTO connector's NonceWriter (rails/crypto/nonce-writer.ts) in a process with a Temporal client: each
// request is an update of the hot wallet's workflow (workflows/hot-wallet.ts), started if absent in the same call
// (update-with-start, id conflict policy USE_EXISTING). The update's id is the transfer's, so a caller that asks
// again (a retried payout activity) is answered from the same update while the run lasts, and from the workflow's
// idempotent activity after it. rails/ never sees Temporal: the process hands this to the connector.
import {
  ApplicationFailure,
  type Client,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { type NewOutgoingTx, type NonceWriter, type WalletFunds, WalletShortError } from '../rails/crypto/nonce-writer';
import type { OutgoingTx } from '../rails/crypto/outgoing-store';
import { Semaphore } from '../services/semaphore';
import type { hotWalletWorkflow } from '../workflows/hot-wallet';
import {
  HOT_WALLET_NONCE_UPDATE,
  HOT_WALLET_ROLLING_OVER,
  HOT_WALLET_SHORT,
  hotWalletWorkflowId,
} from '../workflows/ids';
import type { HotWalletNonceRequest } from './hot-wallet';

/**
 * Updates one process has in flight at one wallet's workflow. The workflow gives the nonces of all it holds in one
 * activity, but the server refuses an update past ten in flight per workflow (history.maxInFlightUpdates): the rest
 * wait here, in arrival order, rather than be refused and retried.
 */
const IN_FLIGHT_PER_WALLET = 8;

/** A run handing over to the next refuses for a few workflow tasks; asked again this often, this many times. */
const ROLLING_OVER_PAUSE_MS = 50;
const ROLLING_OVER_ASKS = 200;

export interface HotWalletQueues {
  /** The deployment's main task queue: the workflow runs there, and its id is scoped by it (decision 0143). */
  taskQueue: string;
  /** Where the workflow's activity runs. */
  railsTaskQueue: string;
}

export function temporalNonceWriter(temporal: Client, queues: HotWalletQueues): NonceWriter {
  const permits = new Map<string, Semaphore>();
  const ask = (workflowId: string, tx: NewOutgoingTx, chainNonce: number, funds?: WalletFunds) =>
    temporal.workflow.executeUpdateWithStart<typeof hotWalletWorkflow, OutgoingTx, [HotWalletNonceRequest]>(
      HOT_WALLET_NONCE_UPDATE,
      {
        args: [{ tx, chainNonce, ...(funds ? { funds } : {}) }],
        updateId: tx.id,
        startWorkflowOperation: new WithStartWorkflowOperation<typeof hotWalletWorkflow>('hotWalletWorkflow', {
          workflowId,
          taskQueue: queues.taskQueue,
          args: [{ chainId: tx.chainId, wallet: tx.wallet, railsTaskQueue: queues.railsTaskQueue }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      },
    );
  return {
    async nonceFor(tx, chainNonce, funds) {
      const workflowId = hotWalletWorkflowId(queues.taskQueue, tx.chainId, tx.wallet);
      let permit = permits.get(workflowId);
      if (!permit) permits.set(workflowId, (permit = new Semaphore(IN_FLIGHT_PER_WALLET, Infinity)));
      return permit.run(async () => {
        for (let asked = 1; ; asked++) {
          try {
            return await ask(workflowId, tx, chainNonce, funds);
          } catch (err) {
            if (failureType(err) === HOT_WALLET_SHORT) throw new WalletShortError(shortReason(err));
            if (failureType(err) !== HOT_WALLET_ROLLING_OVER || asked >= ROLLING_OVER_ASKS) throw err;
            await new Promise((resolve) => setTimeout(resolve, ROLLING_OVER_PAUSE_MS));
          }
        }
      }, unreachable);
    },
  };
}

const shortReason = (err: unknown) => ((err as WorkflowUpdateFailedError).cause as ApplicationFailure).message;

/** The type of the workflow's failure of an update (rolling over, short of funds), if that is what `err` is. */
const failureType = (err: unknown) =>
  err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause.type : undefined;

// The queue has no bound: a payout waits its turn for as long as its activity may run.
const unreachable = () => new Error('the hot wallet nonce queue is unbounded');
