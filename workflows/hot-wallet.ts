// One workflow per hot wallet, the single writer of its nonces (docs/decisions/0142). Payouts and returns ask it for
// their transfer's nonce with an update (started if absent: activities/hot-wallet-nonces.ts); it answers one request
// at a time, in the order they arrived, each by an idempotent activity on the rails' task queue that gives the nonce
// in Postgres under the wallet's row lock (the lock and the unique (chain_id, wallet, nonce) stay as the backstop).
// A request asked again (a retried payout activity, a worker killed mid-update) gets the nonce its id was given.
// It lives for ever: after REQUESTS_PER_RUN requests (or when the server suggests it) it stops taking new ones,
// lets the ones it took finish, and continues as new; a request refused meanwhile is asked again by its caller.
import * as wf from '@temporalio/workflow';
import type { HotWalletActivities, HotWalletNonceRequest } from '../activities/hot-wallet';
import type { OutgoingTx } from '../rails/crypto/outgoing-store';
import { HOT_WALLET_NONCE_UPDATE, HOT_WALLET_ROLLING_OVER } from './ids';

export interface HotWalletInput {
  chainId: number;
  /** The wallet's address (EIP-55), as its signer gives it. */
  wallet: string;
  /** Where its activity runs (a workflow reads no config). */
  railsTaskQueue: string;
  /** Requests a run takes before it continues as new; REQUESTS_PER_RUN unless a test asks for short runs. */
  requestsPerRun?: number;
}

export const hotWalletNonceUpdate = wf.defineUpdate<OutgoingTx, [HotWalletNonceRequest]>(HOT_WALLET_NONCE_UPDATE);

/**
 * A request adds about eight events to the history (the update accepted and completed, the activity scheduled,
 * started and completed, a workflow task): 250 of them stay well under the 4 Ki events at which the server suggests
 * continuing as new, and under its 2,000 updates a run.
 */
export const REQUESTS_PER_RUN = 250;

export async function hotWalletWorkflow(input: HotWalletInput): Promise<never> {
  const { giveHotWalletNonce } = wf.proxyActivities<HotWalletActivities>({
    taskQueue: input.railsTaskQueue,
    startToCloseTimeout: '10s',
    // Postgres down delays the nonce, never loses it: retried until it answers.
    retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
  });
  const perRun = input.requestsPerRun ?? REQUESTS_PER_RUN;
  let taken = 0;
  let closing = false;
  // The queue: each request's activity starts once the one before it has answered.
  let last: Promise<unknown> = Promise.resolve();
  wf.setHandler(
    hotWalletNonceUpdate,
    (request) => {
      taken += 1;
      const turn = last.then(() => giveHotWalletNonce(request));
      last = turn.catch(() => undefined);
      return turn;
    },
    {
      validator: (request) => {
        if (closing) {
          throw wf.ApplicationFailure.create({
            type: HOT_WALLET_ROLLING_OVER,
            message: 'the hot wallet workflow is continuing as new: ask again',
          });
        }
        if (request.tx.chainId !== input.chainId || request.tx.wallet !== input.wallet) {
          throw wf.ApplicationFailure.create({
            nonRetryable: true,
            message: `this workflow writes the nonces of ${input.wallet} on chain ${input.chainId} only`,
          });
        }
      },
    },
  );
  await wf.condition(() => taken >= perRun || wf.workflowInfo().continueAsNewSuggested);
  closing = true;
  await wf.condition(wf.allHandlersFinished);
  return wf.continueAsNew<typeof hotWalletWorkflow>(input);
}
