// A withdrawal above the review threshold (55,000 BRL, about 10,000 USD at the test rates), held ON_HOLD for an
// operator's decision: what the CLI's withdrawal decisions are tested on.
import { expect } from 'chai';
import { activeAccount } from './fixtures';
import { approvedInstruction, referenceBeneficiary } from './beneficiary-fixtures';
import { fund, quote, untilStatus } from './money';
import { idem, stack, TestCustomer } from './stack';

/** Creates `c` a funded BRL account and a withdrawal of 55,000 BRL to `dictKey`; its id once it is ON_HOLD. */
export async function heldWithdrawal(c: TestCustomer, dictKey: string): Promise<string> {
  const { http } = await stack();
  const account = await activeAccount(c, ['BRL']);
  await fund(c, account.id, 'BRL', '60000.00');
  const { beneficiaryId, instructionId } = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey });
  const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '55000.00' });
  const res = await http
    .post('/api/operations/withdrawal')
    .set(c.auth)
    .set(idem())
    .send({ accountId: account.id, quoteId: q.id, beneficiary: referenceBeneficiary(beneficiaryId, instructionId) });
  expect(res.status).to.equal(201);
  await untilStatus(c, res.body.id, 'ON_HOLD');
  return res.body.id;
}
