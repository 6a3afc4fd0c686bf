// One workflow per hot wallet, the single writer of its nonces (docs/decisions/0142). Payouts and returns ask it for
// their transfer's nonce with an update (started if absent: activities/hot-wallet-nonces.ts). The update's handler
// only parks its request; the main loop takes every parked request, in the order they arrived (up to BATCH_LIMIT),
// and gives them their nonces in ONE idempotent activity on the rails' task queue (one Postgres transaction under
// the wallet's row lock; the lock and the unique (chain_id, wallet, nonce) stay as the backstop), then answers each
// update with its own transfer. A request that arrives while that activity runs waits for the next turn. A request
// asked again (a retried payout activity, a worker killed mid-update) gets the nonce its id was given.
// It lives for ever: after REQUESTS_PER_RUN requests (or when the server suggests it) it stops taking new ones,
// gives the ones it took, and continues as new; a request refused meanwhile is asked again by its caller.
import * as wf from '@temporalio/workflow';
import type { HotWalletActivities, HotWalletNonceRequest } from '../activities/hot-wallet';
import type { OutgoingTx } from '../rails/crypto/outgoing-store';
import { HOT_WALLET_NONCE_UPDATE, HOT_WALLET_ROLLING_OVER, HOT_WALLET_SHORT } from './ids';

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
 * A request adds two events to the history (its update accepted and completed), and each batch about six more (the
 * activity scheduled, started and completed, a workflow task): 250 requests stay well under the 4 Ki events at
 * which the server suggests continuing as new even one batch each, and under its 2,000 updates a run.
 */
export const REQUESTS_PER_RUN = 250;

/**
 * Requests given in one activity at most: one transaction of a few hundred rows stays short. The server lets ten
 * updates be in flight per workflow (history.maxInFlightUpdates), so today a batch is ten at most anyway.
 */
export const BATCH_LIMIT = 100;

/** The update failure of a request whose row the database refused (a bug): its caller's activity fails and retries. */
const NONCE_REFUSED = 'HOT_WALLET_NONCE_REFUSED';

interface Parked {
  request: HotWalletNonceRequest;
  answer: (tx: OutgoingTx) => void;
  refuse: (failure: wf.ApplicationFailure) => void;
}

export async function hotWalletWorkflow(input: HotWalletInput): Promise<never> {
  const { giveHotWalletNonces } = wf.proxyActivities<HotWalletActivities>({
    taskQueue: input.railsTaskQueue,
    startToCloseTimeout: '10s',
    // Postgres down delays the nonces, never loses them: retried until it answers.
    retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
  });
  const perRun = input.requestsPerRun ?? REQUESTS_PER_RUN;
  let taken = 0;
  let closing = false;
  // A request answered short of funds is answered so for its update id until the run ends, even once the wallet is
  // funded: the run ends after the batch, so that its payout, asking again by the same id, is asked afresh (0221).
  let answeredShort = false;
  const full = () => taken >= perRun || answeredShort || wf.workflowInfo().continueAsNewSuggested;
  // The requests waiting for the next turn, in arrival order.
  const parked: Parked[] = [];
  wf.setHandler(
    hotWalletNonceUpdate,
    (request) => {
      taken += 1;
      return new Promise<OutgoingTx>((answer, refuse) => parked.push({ request, answer, refuse }));
    },
    {
      validator: (request) => {
        // `full()` as well as `closing`: updates accepted in one workflow task before the main loop runs again
        // would otherwise overshoot the run's bound.
        if (closing || full()) {
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
  for (;;) {
    await wf.condition(() => parked.length > 0 || full());
    if (full()) closing = true;
    if (parked.length === 0) break;
    const batch = parked.splice(0, BATCH_LIMIT);
    const answers = await giveHotWalletNonces(batch.map((p) => p.request));
    batch.forEach((p, i) => {
      const answer = answers[i];
      if ('tx' in answer) p.answer(answer.tx);
      else if ('short' in answer) {
        answeredShort = true;
        p.refuse(wf.ApplicationFailure.create({ type: HOT_WALLET_SHORT, nonRetryable: true, message: answer.short }));
      } else
        p.refuse(wf.ApplicationFailure.create({ type: NONCE_REFUSED, nonRetryable: true, message: answer.refused }));
    });
  }
  await wf.condition(wf.allHandlersFinished);
  return wf.continueAsNew<typeof hotWalletWorkflow>(input);
}
