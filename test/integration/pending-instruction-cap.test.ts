// Each payment instruction waits for its review in a workflow of its own, with no deadline: a customer (or a leaked
// key) has at most PAYMENT_INSTRUCTIONS_PENDING_MAX of them PENDING_REVIEW at once (decision 0316).
import { expect } from 'chai';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

describe('payment instructions waiting for review, per customer', function () {
  this.timeout(120000);

  it('caps them: racing creates at the cap minus one give one 201, the others 422', async () => {
    const { http, config } = await stack();
    const CAP = 4;
    const before = config.paymentInstructionsPendingMax;
    // The stack's config is read at each create.
    config.paymentInstructionsPendingMax = CAP;
    try {
      const c = await newCustomer();
      const other = await newCustomer();
      const create = (who: TestCustomer, key: string) =>
        http
          .post('/api/beneficiaries')
          .set(who.auth)
          .set(idem())
          .send(beneficiaryBody(pixInstruction('EMAIL', `${key}@example.com`)));
      const first = await create(c, 'cap-0');
      expect(first.status).to.equal(201);
      const reviewedId: string = first.body.paymentInstructions[0].id;
      for (let i = 1; i < CAP - 1; i++) expect((await create(c, `cap-${i}`)).status).to.equal(201);

      // New beneficiaries and an instruction added to one, at once: one of them is the last one allowed.
      const add = (i: number) =>
        http
          .post(`/api/beneficiaries/${first.body.id}/payment-instructions`)
          .set(c.auth)
          .set(idem())
          .send(pixInstruction('EMAIL', `cap-added-${i}@example.com`));
      const raced = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => create(c, `cap-race-${i}`)),
        ...Array.from({ length: 3 }, (_, i) => add(i)),
      ]);
      const outcomes = raced.map((r) => `${r.status} ${r.body.code ?? ''}`.trim()).sort();
      expect(outcomes).to.deep.equal(['201', ...Array(6).fill('422 PAYMENT_INSTRUCTION_LIMIT_REACHED')]);
      const refused = raced.find((r) => r.status === 422)!;
      expect(refused.body.details).to.deep.equal({ limit: CAP });
      expect(refused.body.message).to.equal(
        `a customer may have at most ${CAP} payment instructions waiting for review; wait for their review first`,
      );
      const listed = await http.get('/api/beneficiaries').set(c.auth);
      const createdInRace = raced.slice(0, 4).filter((r) => r.status === 201).length;
      expect(listed.body.meta.total, 'the refused ones created no beneficiary').to.equal(CAP - 1 + createdInRace);

      // Another customer is not counted against it; a reviewed instruction no longer counts.
      expect((await create(other, 'cap-other')).status).to.equal(201);
      const reviewed = await http
        .post(`/api/sandbox/payment-instructions/${reviewedId}/review`)
        .set(c.auth)
        .set(idem())
        .send({ decision: 'REJECT', reason: 'not this one' });
      expect(reviewed.status).to.equal(200);
      expect((await create(c, 'cap-after')).status).to.equal(201);
      const again = await create(c, 'cap-again');
      expect([again.status, again.body.code]).to.deep.equal([422, 'PAYMENT_INSTRUCTION_LIMIT_REACHED']);
    } finally {
      config.paymentInstructionsPendingMax = before;
    }
  });
});
