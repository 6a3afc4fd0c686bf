// A reviewer's reason is checked by the service, as the API's schemas check it (1 to N characters, not only blanks):
// the operator CLI reaches the same services without a schema, and recorded an empty or blank rejection reason.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { createAccount, getAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { heldWithdrawal } from '../helpers/held-withdrawal';
import { cambio, cambioFails } from '../helpers/cli';
import { getOp } from '../helpers/money';
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
    const id = await heldWithdrawal(c, 'held@example.com');
    for (const reason of ['', ' \t ']) {
      const { body } = await cambioFails('withdrawal', 'reject', id, '--reason', reason);
      expect(body.code, JSON.stringify(reason)).to.equal('VALIDATION_ERROR');
    }
    const sandbox = await http
      .post(`/api/sandbox/operations/${id}/hold-review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'REJECT', reason: '   ' });
    expect(sandbox.status).to.equal(400);
    expect(await decisionCount(id)).to.equal(0);
    expect((await getOp(c, id)).currentState.status).to.equal('ON_HOLD');
  });
});
