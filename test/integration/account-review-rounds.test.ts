// A review decision belongs to its round (decision 0008: each round is its own workflow). The activity that applies it
// is retried when its worker dies after COMMIT; by then the customer may have resubmitted, and the retry must not
// decide the new round, whose documents no reviewer has seen.
import { expect } from 'chai';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAccountReviewActivities } from '../../activities/account-review';
import { accountReviewWorkflowId } from '../../workflows/ids';
import { getAccount, sandboxDecide, submitReview, uploadAllDocuments, createAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';

describe('account review rounds', function () {
  this.timeout(120000);

  it('a retried decision of round 1 leaves round 2 UNDER_REVIEW, and round 2 takes its own decision', async () => {
    const { services, config } = await stack();
    const c = await newCustomer();
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    expect((await sandboxDecide(c, account.id, 'REJECT', 'blurry')).currentState.status).to.equal('ACTION_REQUIRED');
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);

    // Round 1's activity, run again as Temporal retries it: the input its workflow gave it, round and all.
    const { applyAccountReview } = createAccountReviewActivities({ ...services, config });
    const roundOne = { accountId: account.id, decision: 'REJECT' as const, reason: 'blurry', round: 1 };
    const retried = await new MockActivityEnvironment().run(applyAccountReview, roundOne);
    expect(retried).to.equal('UNDER_REVIEW');
    const waiting = await getAccount(c, account.id);
    expect(waiting.currentState.status).to.equal('UNDER_REVIEW');
    expect(waiting.requirements.pendingVerification).to.have.length(2);

    expect((await sandboxDecide(c, account.id, 'APPROVE')).currentState.status).to.equal('ACTIVE');
    // Round 2's workflow told its activity which round it decides.
    const history = await services.temporal.workflow.getHandle(accountReviewWorkflowId(account.id, 2)).fetchHistory();
    const inputs = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data)
      .filter((d): d is Uint8Array => !!d)
      .map((d) => JSON.parse(Buffer.from(d).toString('utf8')));
    expect(inputs).to.deep.equal([{ accountId: account.id, decision: 'APPROVE', round: 2 }]);
  });
});
