import { expect } from 'chai';
import { presentOperation } from '../../presenters/operation';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { approvedInstruction, referenceBeneficiary } from '../helpers/beneficiary-fixtures';
import { balance, fund, getOp, quote, untilStatus } from '../helpers/money';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { pay } from '../helpers/inbound-payments';

async function eventsOf(operationId: string) {
  const { services } = await stack();
  const rows = await systemEm(services.orm).execute(
    `select type, payload from events where resource_id = ? order by at_time, created_at`,
    [operationId],
  );
  return rows as Array<{ type: string; payload: Record<string, any> }>;
}

async function setup(assets = ['BRL', 'USD']) {
  const c = await newCustomer();
  const account = await activeAccount(c, assets as never);
  return { c, account };
}

const post = async (c: TestCustomer, kind: string, body: Record<string, unknown>) =>
  (await stack()).http.post(`/api/operations/${kind}`).set(c.auth).set(idem()).send(body);

/** A new customer's deposit into a new account with `assets`, on a quote of `quoted`, paid in through `rail`. */
async function requestedDeposit(
  assets: string[],
  quoted: { sourceAsset: string; targetAsset: string; sourceAmount: string },
  rail: string,
) {
  const { c, account } = await setup(assets);
  const q = await quote(c, { accountId: account.id, ...quoted });
  const res = await post(c, 'deposit', { accountId: account.id, quoteId: q.id, fundingInstruction: { rail } });
  return { c, account, q, res };
}

describe('operations', function () {
  this.timeout(120000);

  describe('swap', () => {
    it('holds at creation, settles on completion and records the FX_SPREAD fee', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '1000.00');
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'USD',
        sourceAmount: '540.00',
      });
      const res = await post(c, 'swap', { accountId: account.id, quoteId: q.id });
      expect(res.status).to.equal(201);
      expect(res.body.currentState.status).to.equal('REQUESTED');
      expect(res.body.states).to.have.length(1);
      expect(res.body.intent).to.deep.equal({ type: 'SWAP', sourceAsset: 'BRL', targetAsset: 'USD' });
      expect(res.body.quote.id).to.equal(q.id);
      expect(res.body.quote.consumedAt).to.be.a('string');
      expect(res.body.fees).to.have.length(1);
      expect(res.body.fees[0].source).to.equal('FX_SPREAD');
      expect(res.body.fees[0].amount).to.deep.equal({ value: '2.70', asset: 'BRL', decimals: 2 });
      const done = await untilStatus(c, res.body.id, 'COMPLETED');
      expect(done.states.map((s: { status: string }) => s.status)).to.deep.equal([
        'REQUESTED',
        'PROCESSING',
        'COMPLETED',
      ]);
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '460.00', held: '0.00', total: '460.00' });
      expect((await balance(c, account.id, 'USD')).available).to.equal(q.targetAmount.value);
      const events = await eventsOf(res.body.id);
      expect(events.map((e) => e.type)).to.deep.equal(['OPERATION_REQUESTED', 'OPERATION_COMPLETED']);
      const completed = events[1].payload;
      expect(completed.currentState.status).to.equal('COMPLETED');
      expect(completed.destinationAmount).to.deep.equal(q.targetAmount);
      expect(completed.fees[0]).to.deep.include({ type: 'PERCENTAGE', source: 'FX_SPREAD', percentage: '0.005' });
      expect(completed.quote.id).to.equal(q.id);
      expect(new Date(completed.atTime).getTime()).to.be.greaterThan(new Date(res.body.createdAt).getTime());
    });

    it(
      'refuses a swap the balance cannot cover with 422 INSUFFICIENT_FUNDS, consumes nothing and replays ' +
        'the refusal',
      async () => {
        const { c, account } = await setup();
        await fund(c, account.id, 'BRL', '10.00');
        const q = await quote(c, {
          accountId: account.id,
          sourceAsset: 'BRL',
          targetAsset: 'USD',
          sourceAmount: '10.01',
        });
        // The refusal comes from the balance CHECK, after the quote, operation and outbox writes of the same batch:
        // all of them roll back to the handler's savepoint, and the refusal is what the key answers from then on.
        const key = idem();
        const swap = async () =>
          (await stack()).http
            .post('/api/operations/swap')
            .set(c.auth)
            .set(key)
            .send({ accountId: account.id, quoteId: q.id });
        const res = await swap();
        expect(res.status).to.equal(422);
        expect(res.body.code).to.equal('INSUFFICIENT_FUNDS');
        expect(res.headers).not.to.have.property('idempotent-replayed');
        expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '10.00', held: '0.00', total: '10.00' });
        const list = await (
          await stack()
        ).http
          .get('/api/operations')
          .query({ filters: 'intent.type[eq]=SWAP' })
          .set(c.auth);
        expect(list.body.meta.total).to.equal(0);

        await fund(c, account.id, 'BRL', '1.00');
        const again = await swap();
        expect([again.status, again.body.code, again.headers['idempotent-replayed']]).to.deep.equal([
          422,
          'INSUFFICIENT_FUNDS',
          'true',
        ]);
        const other = await post(c, 'swap', { accountId: account.id, quoteId: q.id });
        expect(other.status, 'the quote was not consumed').to.equal(201);
      },
    );

    it('refuses an asset the account does not have with 422 ASSET_NOT_ENABLED', async () => {
      const { c, account } = await setup(['BRL']);
      await fund(c, account.id, 'BRL', '100.00');
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'EUR',
        sourceAmount: '10.00',
      });
      const res = await post(c, 'swap', { accountId: account.id, quoteId: q.id });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('ASSET_NOT_ENABLED');
    });
  });

  describe('quotes are consumed once', () => {
    it('8 operations racing for one quote give one 201 and seven 409 QUOTE_ALREADY_CONSUMED', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '1000.00');
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'USD',
        sourceAmount: '10.00',
      });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => post(c, 'swap', { accountId: account.id, quoteId: q.id })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([201, 409, 409, 409, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.code).to.equal('QUOTE_ALREADY_CONSUMED');
      const winner = results.find((r) => r.status === 201)!;
      await untilStatus(c, winner.body.id, 'COMPLETED');
      expect((await balance(c, account.id, 'BRL')).available).to.equal('990.00');
    });

    it('an expired quote is 422 QUOTE_EXPIRED', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '100.00');
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'USD',
        sourceAmount: '10.00',
      });
      const { services } = await stack();
      await systemEm(services.orm).execute(`update quotes set expires_at = now() - interval '1 second' where id = ?`, [
        q.id,
      ]);
      const res = await post(c, 'swap', { accountId: account.id, quoteId: q.id });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('QUOTE_EXPIRED');
    });

    it("another customer's quote is 422 QUOTE_NOT_FOUND, another account's is 422 QUOTE_ACCOUNT_MISMATCH", async () => {
      const { c, account } = await setup();
      const other = await activeAccount(c, ['BRL', 'USD']);
      const stranger = await setup();
      const foreign = await quote(stranger.c, {
        accountId: stranger.account.id,
        sourceAsset: 'BRL',
        targetAsset: 'USD',
        sourceAmount: '10.00',
      });
      const mine = await quote(c, {
        accountId: other.id,
        sourceAsset: 'BRL',
        targetAsset: 'USD',
        sourceAmount: '10.00',
      });
      const r1 = await post(c, 'swap', { accountId: account.id, quoteId: foreign.id });
      expect([r1.status, r1.body.code]).to.deep.equal([422, 'QUOTE_NOT_FOUND']);
      const r2 = await post(c, 'swap', { accountId: account.id, quoteId: mine.id });
      expect([r2.status, r2.body.code]).to.deep.equal([422, 'QUOTE_ACCOUNT_MISMATCH']);
      const r3 = await post(c, 'swap', { accountId: account.id, quoteId: randomUUID() });
      expect([r3.status, r3.body.code]).to.deep.equal([422, 'QUOTE_NOT_FOUND']);
    });
  });

  describe('transfer', () => {
    it('moves a same-asset amount between two accounts with the spec response', async () => {
      const { c, account } = await setup();
      const target = await activeAccount(c, ['BRL']);
      await fund(c, account.id, 'BRL', '100.00');
      const res = await post(c, 'transfer', {
        sourceAccountId: account.id,
        targetAccountId: target.id,
        amount: { value: '40.00', asset: 'BRL' },
      });
      expect(res.status).to.equal(201);
      expect(res.body.sourceAmount).to.deep.equal({ value: '40.00', asset: 'BRL', decimals: 2 });
      expect(res.body.targetAmount).to.deep.equal(res.body.sourceAmount);
      expect(res.body.fees).to.deep.equal([]);
      expect(res.body.transactions).to.deep.equal([]);
      expect(res.body.quote.effectiveRate).to.deep.equal({
        value: '1',
        base: 'BRL',
        quote: 'BRL',
        source: 'peg',
        sourceTime: null,
      });
      expect(res.body.intent).to.deep.equal({
        type: 'TRANSFER',
        targetAccount: { id: target.id, owner: target.owner.legalName },
      });
      await untilStatus(c, res.body.id, 'COMPLETED');
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '60.00', held: '0.00', total: '60.00' });
      expect((await balance(c, target.id, 'BRL')).available).to.equal('40.00');
      expect((await eventsOf(res.body.id)).map((e) => e.type)).to.deep.equal(['OPERATION_COMPLETED']);
    });

    it('answers a retry with the stored answer, word for word, and moves nothing again', async () => {
      const { c, account } = await setup();
      const target = await activeAccount(c, ['BRL']);
      await fund(c, account.id, 'BRL', '100.00');
      const key = idem();
      const send = async () =>
        (await stack()).http
          .post('/api/operations/transfer')
          .set(c.auth)
          .set(key)
          .send({ sourceAccountId: account.id, targetAccountId: target.id, amount: { value: '25.00', asset: 'BRL' } });
      const first = await send();
      expect(first.status).to.equal(201);
      await untilStatus(c, first.body.id, 'COMPLETED');
      // The answer was stored in the operation's transaction: the replay is the REQUESTED answer.
      const again = await send();
      expect([again.status, again.headers['idempotent-replayed']]).to.deep.equal([201, 'true']);
      expect(again.body).to.deep.equal(first.body);
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '75.00', held: '0.00', total: '75.00' });
    });

    it('refuses the same account, an inactive target, a missing asset and a target of another customer', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '100.00');
      const usdOnly = await activeAccount(c, ['USD']);
      const { http } = await stack();
      const pending = await http
        .post('/api/accounts')
        .set(c.auth)
        .set(idem())
        .send((await import('../helpers/fixtures')).accountBody({ assets: ['BRL'] }));
      const stranger = await setup();
      const amount = { value: '1.00', asset: 'BRL' };
      const cases: Array<[string, number, string]> = [
        [account.id, 422, 'SAME_ACCOUNT_TRANSFER'],
        [pending.body.id, 422, 'ACCOUNT_NOT_ACTIVE'],
        [usdOnly.id, 422, 'ASSET_NOT_ENABLED'],
        [stranger.account.id, 404, 'NOT_FOUND'],
      ];
      for (const [targetAccountId, status, code] of cases) {
        const res = await post(c, 'transfer', { sourceAccountId: account.id, targetAccountId, amount });
        expect([res.status, res.body.code], code).to.deep.equal([status, code]);
      }
      const bad = await post(c, 'transfer', {
        sourceAccountId: account.id,
        targetAccountId: usdOnly.id,
        amount: { value: '1.001', asset: 'BRL' },
      });
      expect([bad.status, bad.body.code]).to.deep.equal([400, 'INVALID_AMOUNT_PRECISION']);
      expect((await balance(c, account.id, 'BRL')).available).to.equal('100.00');
    });
  });

  describe('withdrawal', () => {
    it(
      'pays out through an APPROVED PIX instruction with an endToEnd id and ' + 'the withdrawal event payload',
      async () => {
        const { c, account } = await setup();
        await fund(c, account.id, 'BRL', '500.00');
        const { beneficiaryId, instructionId } = await approvedInstruction(c, {
          dictKeyType: 'EMAIL',
          dictKey: 'maria@example.com',
        });
        const q = await quote(c, {
          accountId: account.id,
          sourceAsset: 'BRL',
          targetAsset: 'BRL',
          sourceAmount: '125.50',
        });
        const res = await post(c, 'withdrawal', {
          accountId: account.id,
          quoteId: q.id,
          beneficiary: {
            type: 'REFERENCE',
            id: beneficiaryId,
            paymentInstruction: { type: 'REFERENCE', id: instructionId },
          },
        });
        expect(res.status).to.equal(201);
        expect(res.body.intent.type).to.equal('WITHDRAWAL');
        expect(res.body.intent.beneficiary.paymentInstruction).to.deep.equal({
          id: instructionId,
          rail: 'PIX_KEY',
          keyType: 'EMAIL',
          key: 'maria@example.com',
        });
        const done = await untilStatus(c, res.body.id, 'COMPLETED');
        expect(done.transactions).to.have.length(1);
        expect(done.transactions[0]).to.deep.include({ direction: 'DEBIT', status: 'COMPLETED' });
        expect(await balance(c, account.id, 'BRL')).to.deep.equal({
          available: '374.50',
          held: '0.00',
          total: '374.50',
        });
        const events = await eventsOf(res.body.id);
        expect(events.map((e) => e.type)).to.deep.equal(['OPERATION_REQUESTED', 'OPERATION_COMPLETED']);
        const payload = events[1].payload;
        expect(payload.intent.beneficiary.holder.taxId).to.be.a('string');
        expect(payload.intent.beneficiary.instruction.address).to.deep.equal({
          type: 'PIX',
          rail: 'PIX_KEY',
          keyType: 'EMAIL',
          key: 'maria@example.com',
        });
        expect(payload.transactions[0].type).to.equal('PIX');
        expect(payload.transactions[0].endToEnd).to.match(/^E\d{8}\d{12}[0-9a-f]{11}$/);
        expect(payload.quote).to.equal(null);
      },
    );

    it('fails cleanly and releases the hold when the payout is rejected', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '100.00');
      const { beneficiaryId, instructionId } = await approvedInstruction(c, {
        dictKeyType: 'EMAIL',
        dictKey: 'payout-fails@example.com',
      });
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'BRL',
        sourceAmount: '30.00',
      });
      const res = await post(c, 'withdrawal', {
        accountId: account.id,
        quoteId: q.id,
        beneficiary: {
          type: 'REFERENCE',
          id: beneficiaryId,
          paymentInstruction: { type: 'REFERENCE', id: instructionId },
        },
      });
      expect(res.status).to.equal(201);
      const failed = await untilStatus(c, res.body.id, 'FAILED');
      expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '100.00', held: '0.00', total: '100.00' });
      const events = await eventsOf(res.body.id);
      expect(events.map((e) => e.type)).to.deep.equal(['OPERATION_REQUESTED', 'OPERATION_FAILED']);
      expect(events[1].payload.currentState.reason.code).to.equal('PAYOUT_REJECTED');
    });

    it('holds a withdrawal above the review threshold until an operator approves or rejects it', async () => {
      const { c, account } = await setup(['USD', 'BRL']);
      await fund(c, account.id, 'USD', '30000.00');
      const { beneficiaryId, instructionId } = await approvedInstruction(c, {
        dictKeyType: 'PHONE',
        dictKey: '+5511987654321',
      });
      const ref = {
        type: 'REFERENCE',
        id: beneficiaryId,
        paymentInstruction: { type: 'REFERENCE', id: instructionId },
      };
      const { http } = await stack();
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const q = await quote(c, {
          accountId: account.id,
          sourceAsset: 'USD',
          targetAsset: 'BRL',
          sourceAmount: '12000.00',
        });
        const res = await post(c, 'withdrawal', { accountId: account.id, quoteId: q.id, beneficiary: ref });
        expect(res.status).to.equal(201);
        await untilStatus(c, res.body.id, 'ON_HOLD');
        ids.push(res.body.id);
      }
      expect(await balance(c, account.id, 'USD')).to.deep.equal({
        available: '6000.00',
        held: '24000.00',
        total: '30000.00',
      });
      const approved = await http
        .post(`/api/sandbox/operations/${ids[0]}/hold-review`)
        .set(c.auth)
        .set(idem())
        .send({ decision: 'APPROVE' });
      expect(approved.status).to.equal(200);
      expect(approved.body.currentState.status).to.equal('COMPLETED');
      const rejected = await http
        .post(`/api/sandbox/operations/${ids[1]}/hold-review`)
        .set(c.auth)
        .set(idem())
        .send({ decision: 'REJECT', reason: 'unusual' });
      expect(rejected.body.currentState.status).to.equal('FAILED');
      expect(rejected.body.currentState.reason.code).to.equal('HOLD_REJECTED');
      expect(await balance(c, account.id, 'USD')).to.deep.equal({
        available: '18000.00',
        held: '0.00',
        total: '18000.00',
      });
      const again = await http
        .post(`/api/sandbox/operations/${ids[1]}/hold-review`)
        .set(c.auth)
        .set(idem())
        .send({ decision: 'APPROVE' });
      expect([again.status, again.body.code]).to.deep.equal([409, 'INVALID_STATE']);
    });

    // Ids of another customer's payee name nothing here: the same 404 as an id that exists nowhere, no hold, and the
    // quote stays usable (nothing of the refused request is kept).
    it("refuses another customer's beneficiary or instruction: 404 as an unknown id, nothing held", async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '100.00');
      const stranger = await newCustomer();
      const theirs = await approvedInstruction(stranger, { dictKeyType: 'EMAIL', dictKey: 'theirs@example.com' });
      const mine = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: 'mine@example.com' });
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'BRL',
        sourceAmount: '10.00',
      });
      const withdrawTo = (beneficiaryId: string, instructionId: string) =>
        post(c, 'withdrawal', {
          accountId: account.id,
          quoteId: q.id,
          beneficiary: referenceBeneficiary(beneficiaryId, instructionId),
        });
      const answers = [
        await withdrawTo(theirs.beneficiaryId, theirs.instructionId),
        await withdrawTo(randomUUID(), randomUUID()),
        await withdrawTo(mine.beneficiaryId, theirs.instructionId),
        await withdrawTo(mine.beneficiaryId, randomUUID()),
      ];
      expect(answers.map((r) => [r.status, r.body.code, r.body.message])).to.deep.equal([
        [404, 'NOT_FOUND', answers[1].body.message],
        [404, 'NOT_FOUND', answers[1].body.message],
        [404, 'NOT_FOUND', answers[3].body.message],
        [404, 'NOT_FOUND', answers[3].body.message],
      ]);
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '100.00', held: '0.00', total: '100.00' });
      const paid = await withdrawTo(mine.beneficiaryId, mine.instructionId);
      expect(paid.status).to.equal(201);
    });

    it('refuses INLINE beneficiaries (400) and instructions not yet approved (422)', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '100.00');
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'BRL',
        sourceAmount: '10.00',
      });
      const inline = await post(c, 'withdrawal', {
        accountId: account.id,
        quoteId: q.id,
        beneficiary: { type: 'INLINE', holder: { firstName: 'A' } },
      });
      expect([inline.status, inline.body.code]).to.deep.equal([400, 'INLINE_BENEFICIARY_NOT_SUPPORTED']);
      const { http } = await stack();
      const { beneficiaryBody, pixInstruction } = await import('../helpers/beneficiary-fixtures');
      const b = await http
        .post('/api/beneficiaries')
        .set(c.auth)
        .set(idem())
        .send(beneficiaryBody(pixInstruction('EMAIL', 'pending@example.com')));
      const pending = await post(c, 'withdrawal', {
        accountId: account.id,
        quoteId: q.id,
        beneficiary: {
          type: 'REFERENCE',
          id: b.body.id,
          paymentInstruction: { type: 'REFERENCE', id: b.body.paymentInstructions[0].id },
        },
      });
      expect([pending.status, pending.body.code]).to.deep.equal([422, 'PAYMENT_INSTRUCTION_NOT_APPROVED']);
      expect((await getOp(c, randomUUID())).code).to.equal('NOT_FOUND');
    });

    it('50 concurrent withdrawals racing for one balance never overdraw it', async () => {
      const { c, account } = await setup();
      await fund(c, account.id, 'BRL', '100.00');
      const { beneficiaryId, instructionId } = await approvedInstruction(c, {
        dictKeyType: 'EVP',
        dictKey: randomUUID(),
      });
      const ref = {
        type: 'REFERENCE',
        id: beneficiaryId,
        paymentInstruction: { type: 'REFERENCE', id: instructionId },
      };
      const quotes = await Promise.all(
        Array.from({ length: 50 }, () =>
          quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' }),
        ),
      );
      const results = await Promise.all(
        quotes.map((q) => post(c, 'withdrawal', { accountId: account.id, quoteId: q.id, beneficiary: ref })),
      );
      const created = results.filter((r) => r.status === 201);
      const refused = results.filter((r) => r.status === 422);
      expect(created).to.have.length(10);
      expect(refused).to.have.length(40);
      for (const r of refused) expect(r.body.code).to.equal('INSUFFICIENT_FUNDS');
      await Promise.all(created.map((r) => untilStatus(c, r.body.id, 'COMPLETED', 60000)));
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '0.00', held: '0.00', total: '0.00' });
    });
  });

  describe('deposit', () => {
    it(
      'returns concrete funding instructions per rail (201) and checks the ' + 'rail pays in the quoted asset',
      async () => {
        const { c, account } = await setup(['BRL', 'USDC']);
        const expected: Record<string, [string, string[]]> = {
          PIX_KEY: ['BRL', ['keyType', 'key', 'txid', 'location', 'pixCopiaECola', 'expiresAt']],
          BOLETO: ['BRL', ['barcode', 'digitableLine', 'dueDate', 'pixCopiaECola', 'seuNumero']],
          TED: [
            'BRL',
            [
              'bankCode',
              'branchCode',
              'accountNumber',
              'accountDigit',
              'holderName',
              'holderTaxId',
              'payerTaxId',
              'expiresAt',
            ],
          ],
          // The spec's CRYPTO instruction, stand-in addresses here (no node in this stack).
          CRYPTO: ['USDC', ['network', 'asset', 'walletAddress', 'tokenContract', 'amount', 'expiresAt']],
        };
        for (const [rail, [asset, fields]] of Object.entries(expected)) {
          const q = await quote(c, {
            accountId: account.id,
            sourceAsset: asset,
            targetAsset: 'BRL',
            sourceAmount: '10.00',
          });
          const res = await post(c, 'deposit', { accountId: account.id, quoteId: q.id, fundingInstruction: { rail } });
          expect(res.status, rail).to.equal(201);
          expect(res.body.intent.type).to.equal('DEPOSIT');
          expect(res.body.intent.fundingInstruction).to.have.all.keys('rail', ...fields);
        }
        const q = await quote(c, {
          accountId: account.id,
          sourceAsset: 'USDC',
          targetAsset: 'BRL',
          sourceAmount: '10.00',
        });
        const res = await post(c, 'deposit', {
          accountId: account.id,
          quoteId: q.id,
          fundingInstruction: { rail: 'PIX_KEY' },
        });
        expect([res.status, res.body.code]).to.deep.equal([422, 'RAIL_ASSET_MISMATCH']);
      },
    );

    it('completes a cross-asset deposit when the exact source amount arrives, crediting the target', async () => {
      const { c, account, q, res } = await requestedDeposit(
        ['BRL', 'USD'],
        { sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '540.00' },
        'PIX_KEY',
      );
      const { http } = await stack();
      const paid = await http
        .post(`/api/sandbox/operations/${res.body.id}/inbound-payment`)
        .set(c.auth)
        .set(idem())
        .send({ amount: { value: '540.00', asset: 'BRL' } });
      expect(paid.status).to.equal(200);
      const done = await untilStatus(c, res.body.id, 'COMPLETED');
      expect(done.states.map((s: { status: string }) => s.status)).to.deep.equal([
        'REQUESTED',
        'PROCESSING',
        'COMPLETED',
      ]);
      expect(done.transactions[0]).to.deep.include({ direction: 'CREDIT', status: 'COMPLETED' });
      expect((await balance(c, account.id, 'USD')).available).to.equal(q.targetAmount.value);
      expect((await eventsOf(res.body.id)).map((e) => e.type)).to.deep.equal([
        'OPERATION_REQUESTED',
        'OPERATION_COMPLETED',
      ]);
    });

    it('fails a short payment with a reason, keeps later payments, and completes on replay', async () => {
      const { c, account, res } = await requestedDeposit(
        ['BRL'],
        { sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '100.00' },
        'TED',
      );
      const { http, services } = await stack();
      await http
        .post(`/api/sandbox/operations/${res.body.id}/inbound-payment`)
        .set(c.auth)
        .set(idem())
        .send({ amount: { value: '60.00', asset: 'BRL' } });
      const failed = await untilStatus(c, res.body.id, 'FAILED');
      expect(failed.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
      expect((await balance(c, account.id, 'BRL')).available).to.equal('0.00');
      const topUp = await http
        .post(`/api/sandbox/operations/${res.body.id}/inbound-payment`)
        .set(c.auth)
        .set(idem())
        .send({ amount: { value: '40.00', asset: 'BRL' } });
      expect(topUp.status).to.equal(200);
      // Counted toward the failed deposit, which waits for an operator's replay.
      expect(topUp.body.status).to.equal('MATCHED');
      expect((await untilStatus(c, res.body.id, 'FAILED')).currentState.status).to.equal('FAILED');
      const { replayDeposit } = await import('../../services/operations/signals');
      const { tenantEm } = await import('../../db/orm');
      const replayed = presentOperation(
        await replayDeposit(services, tenantEm(services.orm, c.customerId), res.body.id, 'operator:test'),
      );
      expect(replayed.currentState.status).to.equal('COMPLETED');
      expect(replayed.states.map((s: { status: string }) => s.status)).to.deep.equal([
        'REQUESTED',
        'FAILED',
        'PROCESSING',
        'COMPLETED',
      ]);
      expect((await balance(c, account.id, 'BRL')).available).to.equal('100.00');
      expect((await eventsOf(res.body.id)).map((e) => e.type)).to.deep.equal([
        'OPERATION_REQUESTED',
        'OPERATION_FAILED',
        'OPERATION_COMPLETED',
      ]);
    });

    it('fails a payment in the wrong asset with ASSET_MISMATCH', async () => {
      const { c, res } = await requestedDeposit(
        ['BRL', 'USDC'],
        { sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '5.00' },
        'CRYPTO',
      );
      const { http } = await stack();
      await http
        .post(`/api/sandbox/operations/${res.body.id}/inbound-payment`)
        .set(c.auth)
        .set(idem())
        .send({ amount: { value: '5.000000', asset: 'USDT' } });
      const failed = await untilStatus(c, res.body.id, 'FAILED');
      expect(failed.currentState.reason.code).to.equal('ASSET_MISMATCH');
    });

    for (const rail of ['PIX_KEY', 'TED', 'BOLETO'] as const) {
      it(`refuses a ${rail} payment in USDC, an asset ${rail} never carries: 422 RAIL_ASSET_MISMATCH`, async () => {
        const { c, res } = await requestedDeposit(
          ['BRL', 'USDC'],
          { sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '5.00' },
          rail,
        );
        const paid = await pay(c, res.body.id, '5.000000', { asset: 'USDC' });
        expect(paid.status).to.equal(422);
        expect(paid.body).to.deep.include({ code: 'RAIL_ASSET_MISMATCH' });
        expect(paid.body.details).to.deep.equal({ rail, asset: 'USDC' });
        const payments = await (await stack()).http.get('/api/inbound-payments').set(c.auth);
        expect(payments.body.data).to.deep.equal([]);
      });
    }

    it('answers a duplicate sent while the payment is decided 409 IDEMPOTENCY_KEY_IN_USE; one payment', async () => {
      const { c, res } = await requestedDeposit(
        ['BRL'],
        { sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '25.00' },
        'TED',
      );
      const { http, services } = await stack();
      const key = randomUUID();
      const pay = () =>
        http
          .post(`/api/sandbox/operations/${res.body.id}/inbound-payment`)
          .set(c.auth)
          .set('X-Idempotency-Key', key)
          .send({ amount: { value: '25.00', asset: 'BRL' } });
      const payments = async () =>
        Number(
          (
            await systemEm(services.orm).execute(
              'select count(*)::int as n from inbound_payments where operation_id = ?',
              [res.body.id],
            )
          )[0].n,
        );
      let firstAnswered = false;
      const first = pay().then((r) => ((firstAnswered = true), r));
      // The payment is recorded (the first step committed): the first request now waits for the deposit's decision.
      await eventually(payments, (n) => n === 1, 10000, 2);
      const second = await pay();
      const secondBeforeFirst = !firstAnswered;
      expect((await first).status).to.equal(200);
      if (secondBeforeFirst) {
        expect([second.status, second.body.code]).to.deep.equal([409, 'IDEMPOTENCY_KEY_IN_USE']);
      } else {
        // The first answered before the second arrived: a replay.
        expect([second.status, second.headers['idempotent-replayed']]).to.deep.equal([200, 'true']);
      }
      expect(await payments()).to.equal(1);
      await untilStatus(c, res.body.id, 'COMPLETED');
      const again = await pay();
      expect([again.status, again.headers['idempotent-replayed'], again.body.id]).to.deep.equal([
        200,
        'true',
        (await first).body.id,
      ]);
    });
  });

  describe('reading operations', () => {
    it('lists with filters on type, status, account, assets and tags; other customers see nothing', async () => {
      const { c, account } = await setup();
      const { http, services } = await stack();
      await services.orm.em
        .fork()
        .execute(`update accounts set tags = ?::jsonb where id = ?`, [
          JSON.stringify([{ key: 'team', value: 'treasury', propagate: true }]),
          account.id,
        ]);
      await fund(c, account.id, 'BRL', '100.00');
      const q = await quote(c, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'USD',
        sourceAmount: '10.00',
      });
      const swap = await post(c, 'swap', { accountId: account.id, quoteId: q.id });
      expect(swap.body.tags).to.deep.equal([{ key: 'team', value: 'treasury' }]);
      await untilStatus(c, swap.body.id, 'COMPLETED');
      const q2 = (filters: string) => http.get('/api/operations').query({ filters }).set(c.auth);
      expect((await q2('intent.type[eq]=SWAP')).body.data.map((o: { id: string }) => o.id)).to.deep.equal([
        swap.body.id,
      ]);
      expect((await q2('intent.type[in]=SWAP|DEPOSIT')).body.meta.total).to.equal(2);
      expect((await q2('and(currentState.status[eq]=COMPLETED,targetAmount.asset[eq]=USD)')).body.meta.total).to.equal(
        1,
      );
      expect((await q2(`account.id[eq]=${account.id};sourceAmount.asset[eq]=BRL`)).body.meta.total).to.equal(2);
      expect((await q2('tags.value[eq]=treasury')).body.meta.total).to.equal(2);
      expect((await q2('tags.key[eq]=nope')).body.meta.total).to.equal(0);
      expect((await q2('or(intent.type[eq]=TRANSFER,intent.type[eq]=WITHDRAWAL)')).body.meta.total).to.equal(0);
      const bad = await q2('intent.kind[eq]=SWAP');
      expect([bad.status, bad.body.code]).to.deep.equal([400, 'INVALID_FILTER']);
      const stranger = await newCustomer();
      expect((await http.get('/api/operations').set(stranger.auth)).body.meta.total).to.equal(0);
      expect((await http.get(`/api/operations/${swap.body.id}`).set(stranger.auth)).status).to.equal(404);
      expect((await http.get(`/api/accounts/${account.id}/balances`).set(stranger.auth)).status).to.equal(404);
    });
  });
});
