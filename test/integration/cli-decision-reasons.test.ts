// A reviewer's reason is checked by the service, as the API's schemas check it (1 to N characters, not only blanks):
// the operator CLI reaches the same services without a schema, and recorded an empty or blank rejection reason.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { createAccount, getAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';
import { activeAccount } from '../helpers/fixtures';
import {
  approvedInstruction,
  beneficiaryBody,
  pixInstruction,
  referenceBeneficiary,
} from '../helpers/beneficiary-fixtures';
import { cambio, cambioFails } from '../helpers/cli';
import { fund, quote, untilStatus, getOp } from '../helpers/money';
import { idem, newCustomer, stack } from '../helpers/stack';

async function decisionCount(target: string): Promise<number> {
  const { services } = await stack();
  const rows = await systemEm(services.orm).execute('select id from workflow_decisions where target = ?', [target]);
  return rows.length;
}

describe('reviewers’ reasons, from the CLI as from the API', function () {
  this.timeout(120000);

  it('refuses an empty, blank or overlong reason with VALIDATION_ERROR and records nothing', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const b = await http
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(pixInstruction('EMAIL', 'reasons@example.com')));
    const instructionId: string = b.body.paymentInstructions[0].id;
    for (const reason of ['', '   ', 'x'.repeat(501)]) {
      const { body } = await cambioFails('instruction', 'reject', instructionId, '--reason', reason);
      expect(body.code, JSON.stringify(reason)).to.equal('VALIDATION_ERROR');
    }
    expect(await decisionCount(instructionId)).to.equal(0);
    const rejected = JSON.parse(
      (await cambio('instruction', 'reject', instructionId, '--reason', 'wrong key', '--json')).stdout,
    );
    expect(rejected.paymentInstructions[0].currentState.reason.message).to.equal('wrong key');

    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    expect((await cambioFails('account', 'reject', account.id, '--reason', '  ')).body.code).to.equal(
      'VALIDATION_ERROR',
    );
    expect((await getAccount(c, account.id)).currentState.status).to.equal('UNDER_REVIEW');
    expect(await decisionCount(account.id)).to.equal(0);
  });

  it('refuses a blank reason on a held withdrawal, from the CLI and from the sandbox route', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '60000.00');
    const { beneficiaryId, instructionId } = await approvedInstruction(c, {
      dictKeyType: 'EMAIL',
      dictKey: 'held@example.com',
    });
    const q = await quote(c, {
      accountId: account.id,
      sourceAsset: 'BRL',
      targetAsset: 'BRL',
      sourceAmount: '55000.00',
    });
    const res = await http
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, quoteId: q.id, beneficiary: referenceBeneficiary(beneficiaryId, instructionId) });
    await untilStatus(c, res.body.id, 'ON_HOLD');
    for (const reason of ['', ' \t ']) {
      const { body } = await cambioFails('withdrawal', 'reject', res.body.id, '--reason', reason);
      expect(body.code, JSON.stringify(reason)).to.equal('VALIDATION_ERROR');
    }
    const sandbox = await http
      .post(`/api/sandbox/operations/${res.body.id}/hold-review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'REJECT', reason: '   ' });
    expect(sandbox.status).to.equal(400);
    expect(await decisionCount(res.body.id)).to.equal(0);
    expect((await getOp(c, res.body.id)).currentState.status).to.equal('ON_HOLD');
  });
});
