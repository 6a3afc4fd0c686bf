import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { instructionReviewWorkflowId } from '../../workflows/ids';
import { customerIdKey } from '../../workflows/search-attributes';
import { idem, newCustomer, stack, TestCustomer, untilStarted } from '../helpers/stack';
import {
  approvedInstruction,
  beneficiaryBody,
  individualHolder,
  pixInstruction,
  testAddress,
  validCnpj,
  validCpf,
} from '../helpers/beneficiary-fixtures';
import { cambio, cambioFails } from '../helpers/cli';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

const create = async (c: TestCustomer, body: unknown) =>
  (await stack()).http
    .post('/api/beneficiaries')
    .set(c.auth)
    .set(idem())
    .send(body as object);
const addInstruction = async (c: TestCustomer, id: string, body: unknown) =>
  (await stack()).http
    .post(`/api/beneficiaries/${id}/payment-instructions`)
    .set(c.auth)
    .set(idem())
    .send(body as object);
const get = async (c: TestCustomer, path: string) => (await stack()).http.get(path).set(c.auth);

const review = async (c: TestCustomer, instructionId: string, body: object) =>
  (await stack()).http
    .post(`/api/sandbox/payment-instructions/${instructionId}/review`)
    .set(c.auth)
    .set(idem())
    .send(body);

type View = {
  id: string;
  holder: Record<string, any>;
  relationshipType: string;
  paymentInstructions: Array<Record<string, any>>;
};

/** The `events` rows of one instruction, oldest first, each with exactly the payload the spec describes. */
async function expectInstructionEvents(
  c: TestCustomer,
  b: View,
  instructionId: string,
  kinds: string[],
): Promise<void> {
  const rows: Array<Record<string, any>> = await (
    await stack()
  ).services.orm.em
    .fork()
    .getConnection()
    .execute(
      `select type, resource_type, customer_id, dedupe_key, payload,
            to_char(at_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at_time
     from events where resource_id = ? order by created_at`,
      [instructionId],
    );
  expect(rows.map((r) => r.type)).to.deep.equal(kinds.map((k) => `BENEFICIARY_PAYMENT_INSTRUCTION_${k}`));
  const pi = b.paymentInstructions.find((p) => p.id === instructionId)!;
  const { taxId, ...holder } = b.holder;
  rows.forEach((row, i) => {
    const state = kinds[i] === 'CREATED' ? { status: 'PENDING_REVIEW', createdAt: pi.createdAt } : pi.currentState;
    expect(row).to.include({
      resource_type: 'BENEFICIARY',
      customer_id: c.customerId,
      dedupe_key: `${instructionId}:${kinds[i]}`,
    });
    expect(row.at_time).to.equal(state.createdAt);
    expect(row.payload).to.deep.equal({
      customerId: c.customerId,
      beneficiaryId: b.id,
      holder: { ...holder, taxId: taxId.value },
      relationshipType: b.relationshipType,
      instruction: {
        id: instructionId,
        asset: pi.asset,
        currentState: state,
        address: { type: 'PIX', rail: 'PIX_KEY', keyType: pi.address.dictKeyType, key: pi.address.dictKey },
      },
      atTime: state.createdAt,
    });
  });
}

const validKeys = () => ({
  CPF: validCpf(),
  CNPJ: validCnpj(),
  EMAIL: 'maria.silva@example.com',
  PHONE: '+5511987654321',
  EVP: randomUUID(),
});
const invalidKeys: Record<string, string[]> = {
  CPF: ['12345678900', '123.456.789-09', '1234567890'],
  CNPJ: ['11222333000180', '1122233300018', '11.222.333/0001-81'],
  EMAIL: ['not-an-email', 'maria@example', 'a b@example.com', 'maria..silva@example.com', 'maria@-example.com'],
  PHONE: ['11987654321', '+5510987654321', '+14155552671'],
  EVP: ['not-a-uuid', '123e4567-e89b-12d3-a456-42661417400'],
};

describe('beneficiaries', () => {
  let c: TestCustomer;
  before(async () => {
    c = await newCustomer('Beneficiary Tester');
  });

  describe('POST /api/beneficiaries', () => {
    for (const [type, key] of Object.entries(validKeys())) {
      it(`creates a beneficiary with a PENDING_REVIEW ${type} instruction and its review workflow`, async () => {
        const body = beneficiaryBody(pixInstruction(type as never, key));
        const res = await create(c, body);
        expect(res.status).to.equal(201);
        expect(res.body).to.include({ customerId: c.customerId, relationshipType: 'THIRD_PARTY' });
        expect(res.body.holder).to.deep.equal(body.holder);
        expect(res.body.createdAt).to.equal(res.body.updatedAt);
        const [pi] = res.body.paymentInstructions;
        expect(res.body.paymentInstructions).to.have.length(1);
        expect(pi).to.have.keys('id', 'asset', 'currentState', 'address', 'createdAt');
        expect(pi).to.deep.include({ asset: 'BRL', address: { rail: 'PIX_KEY', dictKeyType: type, dictKey: key } });
        expect(pi.currentState).to.deep.equal({ status: 'PENDING_REVIEW', createdAt: pi.createdAt });
        await expectInstructionEvents(c, res.body, pi.id, ['CREATED']);
        const described = await untilStarted(
          (await stack()).services.temporal.workflow.getHandle(instructionReviewWorkflowId(pi.id)),
        );
        expect(described.status.name).to.equal('RUNNING');
        expect(described.typedSearchAttributes.get(customerIdKey)).to.equal(c.customerId);
      });
    }

    for (const [type, keys] of Object.entries(invalidKeys)) {
      it(`rejects invalid ${type} keys with 400 VALIDATION_ERROR at /paymentInstruction/dictKey`, async () => {
        for (const key of keys) {
          const res = await create(c, beneficiaryBody(pixInstruction(type as never, key)));
          expect(res.status, key).to.equal(400);
          expect(res.body.code).to.equal('VALIDATION_ERROR');
          expect(res.body.details.errors[0].path).to.equal('/paymentInstruction/dictKey');
        }
      });
    }

    it('rejects a non-BRL PIX instruction with 422 RAIL_ASSET_MISMATCH', async () => {
      const res = await create(c, beneficiaryBody(pixInstruction('EMAIL', 'maria@example.com', 'USD')));
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('RAIL_ASSET_MISMATCH');
    });

    it('rejects bad holders with 400 VALIDATION_ERROR at the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ taxId: { value: '12345678900', type: 'CPF' } }, '/holder/taxId/value'],
        [{ taxId: { value: validCnpj(), type: 'CNPJ' } }, '/holder/taxId/type'],
        [{ dateOfBirth: '2999-01-01' }, '/holder/dateOfBirth'],
        [{ dateOfBirth: '1990-02-30' }, '/holder/dateOfBirth'],
        [{ address: { ...testAddress, country: 'bra' } }, '/holder/address/country'],
        [{ nickname: 'Mari' }, '/holder/nickname'],
      ];
      for (const [override, path] of cases) {
        const res = await create(c, { ...beneficiaryBody(), holder: individualHolder(override) });
        expect(res.status, path).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_ERROR');
        expect(res.body.details.errors[0].path).to.equal(path);
      }
    });

    it('rejects unknown and missing properties with 400', async () => {
      for (const [body, path] of [
        [beneficiaryBody(undefined, { nickname: 'x' }), '/nickname'],
        [beneficiaryBody({ ...pixInstruction('EVP', randomUUID()), bank: '001' }), '/paymentInstruction/bank'],
        [{ holder: individualHolder(), relationshipType: 'THIRD_PARTY' }, '/paymentInstruction'],
        [beneficiaryBody(undefined, { relationshipType: 'FRIEND' }), '/relationshipType'],
      ] as const) {
        const res = await create(c, body);
        expect(res.status, path).to.equal(400);
        expect(res.body.details.errors.map((e: { path: string }) => e.path)).to.include(path);
      }
    });

    it('accepts a COMPANY holder with a CNPJ and normalises a masked tax id', async () => {
      const cnpj = validCnpj();
      const masked =
        `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/` + `${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
      const holder = {
        type: 'COMPANY',
        legalName: 'Padaria Boa Vista Ltda',
        taxId: { value: masked, type: 'CNPJ' },
        address: testAddress,
      };
      const res = await create(c, {
        holder,
        relationshipType: 'SELF_OWNED',
        paymentInstruction: pixInstruction('CNPJ', cnpj),
      });
      expect(res.status).to.equal(201);
      expect(res.body.holder).to.deep.equal({ ...holder, taxId: { value: cnpj, type: 'CNPJ' } });
      await expectInstructionEvents(c, res.body, res.body.paymentInstructions[0].id, ['CREATED']);
    });

    it('replays an idempotent retry without creating a second beneficiary', async () => {
      const other = await newCustomer();
      const { http } = await stack();
      const headers = { ...other.auth, ...idem() };
      const body = beneficiaryBody();
      const first = await http.post('/api/beneficiaries').set(headers).send(body);
      const again = await http.post('/api/beneficiaries').set(headers).send(body);
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect((await get(other, '/api/beneficiaries')).body.meta.total).to.equal(1);
    });
  });

  describe('POST /api/beneficiaries/{id}/payment-instructions', () => {
    it('adds a second PENDING_REVIEW instruction and returns the full beneficiary', async () => {
      const created = (await create(c, beneficiaryBody())).body;
      const phone = pixInstruction('PHONE', '+5521998765432');
      const res = await addInstruction(c, created.id, phone);
      expect(res.status).to.equal(201);
      expect(res.body.id).to.equal(created.id);
      expect(res.body.paymentInstructions).to.have.length(2);
      const [first, second] = res.body.paymentInstructions;
      expect(first).to.deep.equal(created.paymentInstructions[0]);
      expect(second.address).to.deep.equal({ rail: 'PIX_KEY', dictKeyType: 'PHONE', dictKey: '+5521998765432' });
      expect(second.currentState.status).to.equal('PENDING_REVIEW');
      expect(res.body.updatedAt).to.equal(second.createdAt);
      expect((await get(c, `/api/beneficiaries/${created.id}`)).body).to.deep.equal(res.body);
      await expectInstructionEvents(c, res.body, second.id, ['CREATED']);
    });

    it('validates the instruction: dictKey path, asset, duplicate key (409)', async () => {
      const created = (await create(c, beneficiaryBody(pixInstruction('EMAIL', 'dup@example.com')))).body;
      const bad = await addInstruction(c, created.id, pixInstruction('PHONE', '987654321'));
      expect(bad.status).to.equal(400);
      expect(bad.body.details.errors[0].path).to.equal('/dictKey');
      const usd = await addInstruction(c, created.id, pixInstruction('PHONE', '+5511912345678', 'USDC'));
      expect(usd.status).to.equal(422);
      expect(usd.body.code).to.equal('RAIL_ASSET_MISMATCH');
      const dup = await addInstruction(c, created.id, pixInstruction('EMAIL', 'dup@example.com'));
      expect(dup.status).to.equal(409);
      expect(dup.body).to.deep.include({ code: 'INVALID_STATE' });
      expect(dup.body.details.instructionId).to.equal(created.paymentInstructions[0].id);
    });

    it('answers 409 for the same EVP or e-mail key written in other letter case', async () => {
      const evp = randomUUID();
      const created = (await create(c, beneficiaryBody(pixInstruction('EVP', evp)))).body;
      const first = created.paymentInstructions[0].id;
      for (const key of [pixInstruction('EVP', evp.toUpperCase()), pixInstruction('EVP', evp)]) {
        const dup = await addInstruction(c, created.id, key);
        expect(dup.status, key.dictKey).to.equal(409);
        expect(dup.body.details.instructionId).to.equal(first);
      }
      const email = await addInstruction(c, created.id, pixInstruction('EMAIL', 'Case.Dup@Example.com'));
      expect(email.status).to.equal(201);
      const again = await addInstruction(c, created.id, pixInstruction('EMAIL', 'case.dup@example.COM'));
      expect(again.status).to.equal(409);
      expect(again.body.details.instructionId).to.equal(email.body.paymentInstructions[1].id);
      expect((await get(c, `/api/beneficiaries/${created.id}`)).body.paymentInstructions).to.have.length(2);
    });

    it('stores a new EVP or e-mail key in lower case, as DICT holds it; refuses the nil UUID as an EVP', async () => {
      const evp = randomUUID();
      const created = (await create(c, beneficiaryBody(pixInstruction('EVP', evp.toUpperCase())))).body;
      expect(created.paymentInstructions[0].address.dictKey).to.equal(evp);
      const email = await addInstruction(c, created.id, pixInstruction('EMAIL', 'Lower.Me@Example.COM'));
      expect(email.status, JSON.stringify(email.body)).to.equal(201);
      expect(email.body.paymentInstructions[1].address.dictKey).to.equal('lower.me@example.com');
      const nil = await addInstruction(c, created.id, pixInstruction('EVP', '00000000-0000-0000-0000-000000000000'));
      expect([nil.status, nil.body.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
      expect(nil.body.details.errors[0].path).to.equal('/dictKey');
    });
  });

  describe('GET /api/beneficiaries', () => {
    let lister: TestCustomer;
    const ids: string[] = [];
    before(async () => {
      lister = await newCustomer();
      for (const rel of ['THIRD_PARTY', 'SELF_OWNED', 'THIRD_PARTY']) {
        ids.push((await create(lister, beneficiaryBody(undefined, { relationshipType: rel }))).body.id);
      }
      await addInstruction(lister, ids[0], pixInstruction('EVP', randomUUID()));
    });

    it('pages summaries with instructionCount, newest first, through both cursors', async () => {
      const page1 = await get(lister, '/api/beneficiaries?limit=2');
      expect(page1.status).to.equal(200);
      expect(page1.body.meta).to.include({ total: 3, previousCursor: null });
      expect(page1.body.data.map((b: { id: string }) => b.id)).to.deep.equal([ids[2], ids[1]]);
      const summary = page1.body.data[0];
      expect(summary).to.have.keys(
        'id',
        'customerId',
        'holder',
        'relationshipType',
        'instructionCount',
        'createdAt',
        'updatedAt',
      );
      expect(summary.instructionCount).to.equal(1);
      const page2 = await get(
        lister,
        `/api/beneficiaries?limit=2&cursor=${encodeURIComponent(page1.body.meta.nextCursor)}`,
      );
      expect(
        page2.body.data.map((b: { id: string; instructionCount: number }) => [b.id, b.instructionCount]),
      ).to.deep.equal([[ids[0], 2]]);
      expect(page2.body.meta.nextCursor).to.equal(null);
      const back = await get(
        lister,
        `/api/beneficiaries?limit=2&direction=PREVIOUS&cursor=${encodeURIComponent(page2.body.meta.previousCursor)}`,
      );
      expect(back.body.data.map((b: { id: string }) => b.id)).to.deep.equal([ids[2], ids[1]]);
      const asc = await get(lister, '/api/beneficiaries?sortOrder=ASCENDING');
      expect(asc.body.data.map((b: { id: string }) => b.id)).to.deep.equal(ids);
    });

    it('filters on relationshipType and createdAt; rejects other fields', async () => {
      const self = await get(
        lister,
        `/api/beneficiaries?filters=${encodeURIComponent('relationshipType[eq]=SELF_OWNED')}`,
      );
      expect(self.body.data.map((b: { id: string }) => b.id)).to.deep.equal([ids[1]]);
      expect(self.body.meta.total).to.equal(1);
      const full = (await get(lister, `/api/beneficiaries/${ids[1]}`)).body;
      const since = await get(
        lister,
        `/api/beneficiaries?sortOrder=ASCENDING&filters=${encodeURIComponent(`createdAt[gte]=${full.createdAt}`)}`,
      );
      expect(since.body.data.map((b: { id: string }) => b.id)).to.deep.equal(ids.slice(1));
      for (const filters of ['holder.firstName[eq]=Maria', 'relationshipType[eq]=FRIEND']) {
        const res = await get(lister, `/api/beneficiaries?filters=${encodeURIComponent(filters)}`);
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('INVALID_FILTER');
      }
    });

    it("hides another customer's beneficiary: 404 on GET, add instruction and review; absent from lists", async () => {
      const stranger = await newCustomer();
      const pi = (await get(lister, `/api/beneficiaries/${ids[0]}`)).body.paymentInstructions[0];
      expect((await get(stranger, `/api/beneficiaries/${ids[0]}`)).status).to.equal(404);
      const add = await addInstruction(stranger, ids[0], pixInstruction('EVP', randomUUID()));
      expect(add.status).to.equal(404);
      expect(add.body.code).to.equal('NOT_FOUND');
      const reviewed = await review(stranger, pi.id, { decision: 'APPROVE' });
      expect(reviewed.status).to.equal(404);
      expect(reviewed.body.code).to.equal('NOT_FOUND');
      expect((await get(stranger, '/api/beneficiaries')).body).to.deep.equal({
        data: [],
        meta: { previousCursor: null, nextCursor: null, total: 0 },
      });
      expect((await get(lister, `/api/beneficiaries/${ids[0]}`)).body.paymentInstructions).to.have.length(2);
      expect((await get(lister, `/api/beneficiaries/${randomUUID()}`)).status).to.equal(404);
    });
  });

  describe('instruction review', () => {
    it('approves through the sandbox route: APPROVED, CREATED and APPROVED events, a replayable workflow', async () => {
      const created = (await create(c, beneficiaryBody())).body;
      const pi = created.paymentInstructions[0];
      const res = await review(c, pi.id, { decision: 'APPROVE', reason: 'ignored on approval' });
      expect(res.status).to.equal(200);
      const approved = res.body.paymentInstructions[0];
      expect(approved.currentState).to.have.keys('status', 'createdAt');
      expect(approved.currentState.status).to.equal('APPROVED');
      expect(res.body.updatedAt).to.equal(approved.currentState.createdAt);
      expect((await get(c, `/api/beneficiaries/${created.id}`)).body).to.deep.equal(res.body);
      await expectInstructionEvents(c, res.body, pi.id, ['CREATED', 'APPROVED']);
      const handle = (await stack()).services.temporal.workflow.getHandle(instructionReviewWorkflowId(pi.id));
      expect(await handle.result()).to.deep.equal({ instructionId: pi.id, status: 'APPROVED' });
      await replayOnCurrentCode(await handle.fetchHistory(), handle.workflowId);
    });

    it("rejects with the reviewer's reason or the default one; a rejected key may be submitted again", async () => {
      const created = (await create(c, beneficiaryBody(pixInstruction('EMAIL', 'again@example.com')))).body;
      const first = created.paymentInstructions[0];
      const second = (await addInstruction(c, created.id, pixInstruction('EVP', randomUUID()))).body
        .paymentInstructions[1];
      const res = await review(c, first.id, { decision: 'REJECT', reason: 'holder name does not match the key owner' });
      expect(res.status).to.equal(200);
      expect(res.body.paymentInstructions[0].currentState).to.deep.include({
        status: 'REJECTED',
        reason: { code: 'INSTRUCTION_REJECTED', message: 'holder name does not match the key owner', details: {} },
      });
      expect(res.body.paymentInstructions[1].currentState.status).to.equal('PENDING_REVIEW');
      await expectInstructionEvents(c, res.body, first.id, ['CREATED', 'REJECTED']);
      const res2 = await review(c, second.id, { decision: 'REJECT' });
      expect(res2.body.paymentInstructions[1].currentState.reason).to.deep.equal({
        code: 'INSTRUCTION_REJECTED',
        message: 'rejected by compliance',
        details: {},
      });
      await expectInstructionEvents(c, res2.body, second.id, ['CREATED', 'REJECTED']);
      const resubmitted = await addInstruction(c, created.id, pixInstruction('EMAIL', 'again@example.com'));
      expect(resubmitted.status).to.equal(201);
      expect(resubmitted.body.paymentInstructions[2].currentState.status).to.equal('PENDING_REVIEW');
    });

    it('answers 409 INVALID_STATE when the instruction was already decided', async () => {
      const pi = (await create(c, beneficiaryBody())).body.paymentInstructions[0];
      expect((await review(c, pi.id, { decision: 'APPROVE' })).status).to.equal(200);
      for (const decision of ['APPROVE', 'REJECT']) {
        const again = await review(c, pi.id, { decision });
        expect(again.status).to.equal(409);
        expect(again.body).to.deep.include({ code: 'INVALID_STATE', details: { status: 'APPROVED' } });
      }
      const rows = await (
        await stack()
      ).services.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from events where resource_id = ?', [pi.id]);
      expect(rows[0].n).to.equal(2);
    });

    it('validates the review request', async () => {
      const pi = (await create(c, beneficiaryBody())).body.paymentInstructions[0];
      expect((await review(c, pi.id, { decision: 'MAYBE' })).body.code).to.equal('VALIDATION_ERROR');
      expect((await review(c, pi.id, { decision: 'APPROVE', note: 'x' })).status).to.equal(400);
      expect((await review(c, 'not-a-uuid', { decision: 'APPROVE' })).status).to.equal(400);
      expect((await review(c, randomUUID(), { decision: 'APPROVE' })).status).to.equal(404);
    });

    it('gives withdrawal tests an APPROVED instruction through approvedInstruction()', async () => {
      const key = randomUUID();
      const { beneficiaryId, instructionId, beneficiary } = await approvedInstruction(c, {
        dictKeyType: 'EVP',
        dictKey: key,
      });
      expect(beneficiary.id).to.equal(beneficiaryId);
      expect(beneficiary.paymentInstructions[0]).to.deep.include({
        id: instructionId,
        address: { rail: 'PIX_KEY', dictKeyType: 'EVP', dictKey: key },
      });
      expect(beneficiary.paymentInstructions[0].currentState.status).to.equal('APPROVED');
    });

    it('lets an operator approve and reject from the CLI, across customers', async () => {
      const cli = (...args: string[]) => cambio('instruction', ...args);
      const created = (await create(c, beneficiaryBody())).body;
      const other = (await addInstruction(c, created.id, pixInstruction('EVP', randomUUID()))).body
        .paymentInstructions[1];
      const approved = JSON.parse((await cli('approve', created.paymentInstructions[0].id, '--json')).stdout);
      expect(approved.paymentInstructions[0].currentState.status).to.equal('APPROVED');
      const rejected = await cli('reject', other.id, '--reason', 'key owner is a different person');
      expect(rejected.stdout).to.match(new RegExp(`instruction ${other.id} REJECTED`));
      const final = (await get(c, `/api/beneficiaries/${created.id}`)).body.paymentInstructions[1];
      expect(final.currentState.reason.message).to.equal('key owner is a different person');
      const failed = await cambioFails('instruction', 'approve', other.id);
      expect(failed.exitCode).to.equal(1);
      expect(failed.body).to.include({ code: 'INVALID_STATE' });
    });

    // A review is of a payee: the operator finds the instructions waiting and sees each key and its holder before
    // deciding, with the CLI alone (decision 0311); decided ones leave the list.
    it('lists the instructions waiting for review across customers, each with its key and holder', async () => {
      const cli = (...args: string[]) => cambio('instruction', ...args);
      const key = `review-list-${randomUUID().slice(0, 8)}@example.com`;
      const created = (await create(c, beneficiaryBody(pixInstruction('EMAIL', key)))).body;
      const pending = created.paymentInstructions[0];
      const rows = JSON.parse((await cli('list', '--json')).stdout);
      const row = rows.find((r: { id: string }) => r.id === pending.id);
      expect(row).to.deep.include({
        customerId: c.customerId,
        beneficiaryId: created.id,
        status: 'PENDING_REVIEW',
        asset: 'BRL',
        rail: 'PIX_KEY',
        keyType: 'EMAIL',
        key,
        relationshipType: 'THIRD_PARTY',
      });
      expect(row.holder).to.deep.equal({ name: 'Maria Silva', taxId: created.holder.taxId });
      expect(row.since).to.equal(pending.createdAt);
      const text = (await cli('list')).stdout;
      expect(text.split('\n')).to.include(
        `${pending.id} PENDING_REVIEW PIX_KEY EMAIL ${key} (BRL) for Maria Silva CPF ${created.holder.taxId.value} ` +
          `THIRD_PARTY of customer ${c.customerId} since ${pending.createdAt}`,
      );
      await cli('approve', pending.id);
      const after = JSON.parse((await cli('list', '--json')).stdout);
      expect(after.map((r: { id: string }) => r.id)).to.not.include(pending.id);
    });
  });

  it('answers the sandbox review with 404 NOT_FOUND when sandbox mode is off', async () => {
    const { services } = await stack();
    const live = supertest(createApp({ ...services, config: { ...services.config, sandbox: false } }).callback());
    const pi = (await create(c, beneficiaryBody())).body.paymentInstructions[0];
    const res = await live
      .post(`/api/sandbox/payment-instructions/${pi.id}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'APPROVE' });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
  });
});
