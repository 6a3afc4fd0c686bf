// The operator CLI names what it decides by an id typed or pasted by a person: it must be read as the API reads a
// path id (decision 0066), a UUID in lower case, before it names a row, a lock or a workflow.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { approvedInstruction, referenceBeneficiary } from '../helpers/beneficiary-fixtures';
import { cambio, cambioFails } from '../helpers/cli';
import { fund, quote, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack } from '../helpers/stack';

describe('operator CLI: the ids it decides on', function () {
  this.timeout(120000);

  it('refuses an id that is not a UUID with VALIDATION_ERROR, never the failed SQL', async () => {
    const commands = [
      ['account', 'approve', 'not-a-uuid'],
      ['account', 'reject', 'not-a-uuid', '--reason', 'no'],
      ['account', 'tag', 'not-a-uuid', '--key', 'k', '--value', 'v'],
      ['withdrawal', 'approve', 'not-a-uuid'],
      ['withdrawal', 'reject', 'not-a-uuid'],
      ['deposit', 'replay', 'not-a-uuid'],
      ['deposit', 'pay', 'not-a-uuid', '--amount', '1.00', '--asset', 'BRL', '--end-to-end', 'E1'],
    ];
    for (const args of commands) {
      const { exitCode, body } = await cambioFails(...args);
      expect(exitCode, args.join(' ')).to.equal(1);
      expect(body.code, args.join(' ')).to.equal('VALIDATION_ERROR');
      expect(body.message, args.join(' ')).to.match(/must be a UUID/);
    }
  });

  it('approves a held withdrawal named in upper case: one decision, for the withdrawal’s own workflow', async () => {
    const { http, services } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '60000.00');
    const { beneficiaryId, instructionId } = await approvedInstruction(c, {
      dictKeyType: 'EMAIL',
      dictKey: 'upper-case@example.com',
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
    expect(res.status).to.equal(201);
    const id: string = res.body.id;
    await untilStatus(c, id, 'ON_HOLD');

    const approved = await cambio('withdrawal', 'approve', id.toUpperCase());
    expect(approved.stdout.trim()).to.equal(`operation ${id} is COMPLETED`);
    const rows = (await systemEm(services.orm).execute(
      'select workflow_id, decision from workflow_decisions where target = ?',
      [id],
    )) as { workflow_id: string; decision: string }[];
    expect(rows).to.deep.equal([{ workflow_id: `operation-${id}`, decision: 'APPROVE' }]);
    // A second operator, with the id as the API prints it, is told it was decided.
    expect((await cambioFails('withdrawal', 'reject', id)).body.code).to.equal('INVALID_STATE');
  });
});
