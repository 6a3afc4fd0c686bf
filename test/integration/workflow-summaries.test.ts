// Temporal UI summaries (decision 0050): every workflow starts with a one-line static summary that the relay
// carries from its outbox row, readable in the workflow list and through describe().
import { expect } from 'chai';
import { accountReviewWorkflowId, operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { quote } from '../helpers/money';
import { idem, newCustomer, stack, untilStarted } from '../helpers/stack';

describe('workflow summaries in the Temporal UI', function () {
  this.timeout(60000);

  it('starts a deposit and an account review with their one-line summaries', async () => {
    const { http, services } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL'], { legalName: 'Summary Comércio Ltda' });
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '100.00' });
    const body = { accountId: account.id, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } };
    const dep = await http.post('/api/operations/deposit').set(c.auth).set(idem()).send(body);
    expect(dep.status).to.equal(201);
    const deposit = await untilStarted(services.temporal.workflow.getHandle(operationWorkflowId(dep.body.id)));
    expect(await deposit.staticSummary()).to.equal('DEPOSIT 100.00 BRL via PIX_KEY to Summary Comércio Ltda');
    const review = await untilStarted(services.temporal.workflow.getHandle(accountReviewWorkflowId(account.id, 1)));
    expect(await review.staticSummary()).to.equal('ACCOUNT REVIEW round 1 of Summary Comércio Ltda');
  });
});
