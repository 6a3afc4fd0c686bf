import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { AccountSchema } from '../../db/entities';
import { transition } from '../../domain/states';
import { createApp } from '../../api/app';
import { decideAccountReview } from '../../services/account-review';
import { systemEm, tenantEm } from '../../db/orm';
import { DomainEventSchema } from '../../db/entities';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';
import {
  activeAccount,
  addUbo,
  createAccount,
  documentBody,
  getAccount,
  sandboxDecide,
  submitReview,
  uploadAllDocuments,
} from '../helpers/fixtures';

describe('account review', () => {
  let c: TestCustomer;
  before(async () => {
    c = await newCustomer('Review Ltda');
  });

  async function review(accountId: string) {
    const { http } = await stack();
    return http.post(`/api/accounts/${accountId}/review`).set(c.auth).set(idem());
  }

  it('refuses a review while documents are due, listing them (422 REQUIREMENTS_NOT_MET)', async () => {
    const a = await createAccount(c);
    const ubo = await addUbo(c, a.id);
    const { http } = await stack();
    await http.post(`/api/accounts/${a.id}/documents`).set(c.auth).set(idem()).send(documentBody('PROOF_OF_ADDRESS'));
    const res = await review(a.id);
    expect([res.status, res.body.code]).to.deep.equal([422, 'REQUIREMENTS_NOT_MET']);
    expect(res.body.details.currentlyDue).to.deep.equal([
      { documentType: 'CERTIFICATE_OF_INCORPORATION', uboId: null },
      { documentType: 'ID_DOCUMENT', uboId: ubo.id },
    ]);
    expect(res.body.details.errors).to.deep.equal([]);
    expect((await getAccount(c, a.id)).currentState.status).to.equal('ACTION_REQUIRED');
  });

  it(
    'approves: account and assets ACTIVE, UBOs VERIFIED, requirements satisfied, one ASSET_ACTIVATED per ' + 'asset',
    async () => {
      const a = await createAccount(c, { assets: ['BRL', 'USDC'] });
      await addUbo(c, a.id);
      await uploadAllDocuments(c, a.id);
      const submitted = await review(a.id);
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(202);
      expect(submitted.body.currentState.status).to.equal('UNDER_REVIEW');
      expect(submitted.body.requirements.pendingVerification).to.have.length(3);

      const again = await review(a.id);
      expect([again.status, again.body.code]).to.deep.equal([409, 'INVALID_STATE']);
      const { http } = await stack();
      const late = await http
        .post(`/api/accounts/${a.id}/ubos`)
        .set(c.auth)
        .set(idem())
        .send({ name: 'X', taxId: { value: '11144477735', type: 'CPF' }, address: a.owner.address });
      expect([late.status, late.body.code]).to.deep.equal([409, 'INVALID_STATE']);

      const decided = await sandboxDecide(c, a.id, 'APPROVE');
      expect(decided.currentState.status).to.equal('ACTIVE');
      expect(decided.states.map((s) => s.status)).to.deep.equal(['ACTION_REQUIRED', 'UNDER_REVIEW', 'ACTIVE']);
      expect(decided.assets.map((x) => x.status)).to.deep.equal(['ACTIVE', 'ACTIVE']);
      expect(decided.owner.ubos.map((u) => u.currentState.status)).to.deep.equal(['VERIFIED']);
      expect(decided.requirements.satisfied).to.have.length(3);
      expect(decided.requirements.pendingVerification).to.deep.equal([]);

      const { services } = await stack();
      const events = await systemEm(services.orm).find(
        DomainEventSchema,
        { resourceId: a.id },
        { orderBy: { dedupeKey: 'asc' } },
      );
      expect(events.map((e) => [e.type, e.resourceType, e.dedupeKey])).to.deep.equal([
        ['ASSET_ACTIVATED', 'ASSET', `${a.id}:BRL:ASSET_ACTIVATED`],
        ['ASSET_ACTIVATED', 'ASSET', `${a.id}:USDC:ASSET_ACTIVATED`],
      ]);
      expect(events[0].payload).to.deep.include({
        customerId: c.customerId,
        accountId: a.id,
        asset: 'BRL',
        status: 'ACTIVE',
      });
      expect(events[0].customerId).to.equal(c.customerId);

      const afterActive = await review(a.id);
      expect([afterActive.status, afterActive.body.code]).to.deep.equal([409, 'INVALID_STATE']);
      const redecide = await http
        .post(`/api/sandbox/accounts/${a.id}/review`)
        .set(c.auth)
        .set(idem())
        .send({ decision: 'REJECT' });
      expect([redecide.status, redecide.body.code]).to.deep.equal([409, 'INVALID_STATE']);
    },
  );

  it('a key used again after its 24 h decides the account it names now, with a decision of its own', async () => {
    const { http, services } = await stack();
    const accounts = [await createAccount(c), await createAccount(c)];
    for (const a of accounts) {
      await uploadAllDocuments(c, a.id);
      await submitReview(c, a.id);
    }
    const key = randomUUID();
    const approve = (accountId: string) =>
      http
        .post(`/api/sandbox/accounts/${accountId}/review`)
        .set(c.auth)
        .set('X-Idempotency-Key', key)
        .send({ decision: 'APPROVE' });
    const first = await approve(accounts[0].id);
    expect([first.status, first.body.currentState?.status], JSON.stringify(first.body)).to.deep.equal([200, 'ACTIVE']);

    // The key's 24 h are over: the next use of it is a new request, whose decision is not the first one's.
    const em = systemEm(services.orm);
    await em.execute(
      `update idempotency_keys set expires_at = now() - interval '1 second' where customer_id = ? and key = ?`,
      [c.customerId, key],
    );
    const second = await approve(accounts[1].id);
    expect(second.status, JSON.stringify(second.body)).to.equal(200);
    expect(second.headers['idempotent-replayed']).to.equal(undefined);
    expect([second.body.id, second.body.currentState.status]).to.deep.equal([accounts[1].id, 'ACTIVE']);
    const decisions = (await em.execute(
      `select target from workflow_decisions where target in (?, ?) order by created_at`,
      accounts.map((a) => a.id),
    )) as Array<{ target: string }>;
    expect(decisions.map((d) => d.target)).to.deep.equal(accounts.map((a) => a.id));
  });

  it(
    'rejects with reasons, then a re-upload, resubmission and approval (a ' + 'new review round) activates it',
    async () => {
      const a = await createAccount(c);
      const ubo = await addUbo(c, a.id);
      await uploadAllDocuments(c, a.id);
      await submitReview(c, a.id);
      const rejected = await sandboxDecide(c, a.id, 'REJECT', 'proof of address is older than 90 days');
      expect(rejected.currentState).to.deep.include({
        status: 'ACTION_REQUIRED',
        reason: { code: 'REVIEW_REJECTED', message: 'proof of address is older than 90 days', details: {} },
      });
      expect(rejected.owner.ubos[0].currentState.status).to.equal('REJECTED');
      expect(rejected.requirements.errors).to.have.length(3);
      for (const e of rejected.requirements.errors)
        expect(e.reason).to.include({ message: 'proof of address is older than 90 days' });
      expect(rejected.assets.map((x) => x.status)).to.deep.equal(['ONBOARDING', 'ONBOARDING']);

      const blocked = await review(a.id);
      expect([blocked.status, blocked.body.code]).to.deep.equal([422, 'REQUIREMENTS_NOT_MET']);
      expect(blocked.body.details.errors).to.have.length(3);

      await uploadAllDocuments(c, a.id);
      const resubmitted = await submitReview(c, a.id);
      expect(resubmitted.requirements.errors).to.deep.equal([]);
      expect(resubmitted.owner.ubos[0].currentState.status).to.equal('PENDING');
      const approved = await sandboxDecide(c, a.id, 'APPROVE');
      expect(approved.currentState.status).to.equal('ACTIVE');
      expect(approved.owner.ubos.map((u) => [u.id, u.currentState.status])).to.deep.equal([[ubo.id, 'VERIFIED']]);
      expect(approved.states.map((s) => s.status)).to.deep.equal([
        'ACTION_REQUIRED',
        'UNDER_REVIEW',
        'ACTION_REQUIRED',
        'UNDER_REVIEW',
        'ACTIVE',
      ]);
      const { services } = await stack();
      // The activity's COMMIT makes the account ACTIVE; the workflow closes a moment after it.
      const handle = services.temporal.workflow.getHandle(`account-review-${a.id}-2`);
      await eventually(
        async () => (await handle.describe()).status.name,
        (status) => status === 'COMPLETED',
      );
    },
  );

  it("approves through the service the CLI uses, in the account owner's scope", async () => {
    const a = await createAccount(c);
    await uploadAllDocuments(c, a.id);
    await submitReview(c, a.id);
    const { services } = await stack();
    const view = await decideAccountReview(
      services,
      tenantEm(services.orm, c.customerId),
      a.id,
      { decision: 'APPROVE' },
      'operator:test',
    );
    expect(view.account.status).to.equal('ACTIVE');
    const other = await newCustomer('Stranger Ltda');
    const err = await decideAccountReview(
      services,
      tenantEm(services.orm, other.customerId),
      a.id,
      { decision: 'APPROVE' },
      'operator:test',
    ).catch((e) => e);
    expect(err.code).to.equal('NOT_FOUND');
  });

  it('starts the round itself when the outbox start never happened (crash between COMMIT and start)', async () => {
    const a = await createAccount(c);
    await uploadAllDocuments(c, a.id);
    const { services } = await stack();
    // What a crashed submission leaves behind: UNDER_REVIEW committed, no workflow started yet.
    const em = systemEm(services.orm);
    const row = await em.findOneOrFail(AccountSchema, { id: a.id });
    transition(row, 'UNDER_REVIEW', new Date());
    await em.flush();
    const view = await decideAccountReview(
      services,
      tenantEm(services.orm, c.customerId),
      a.id,
      { decision: 'APPROVE' },
      'operator:test',
    );
    expect(view.account.status).to.equal('ACTIVE');
  });

  it('replays a finished review history deterministically', async () => {
    const a = await activeAccount(c, ['BRL']);
    const { services } = await stack();
    const history = await services.temporal.workflow.getHandle(`account-review-${a.id}-1`).fetchHistory();
    await replayOnCurrentCode(history);
  });

  it('activeAccount fixture yields an ACTIVE account with ACTIVE assets', async () => {
    const a = await activeAccount(c, ['EUR'], { withUbo: true });
    expect(a.currentState.status).to.equal('ACTIVE');
    expect(a.assets).to.deep.equal([{ asset: 'EUR', allowsVirtualAccounts: false, status: 'ACTIVE' }]);
    const seen = await eventually(
      () => getAccount(c, a.id),
      (x) => x.owner.ubos.every((u) => u.currentState.status === 'VERIFIED'),
    );
    expect(seen.owner.ubos).to.have.length(1);
  });

  it('answers 404 on the sandbox route when sandbox mode is off', async () => {
    const { services } = await stack();
    const a = await createAccount(c);
    const prod = supertest(createApp({ ...services, config: { ...services.config, sandbox: false } }).callback());
    const res = await prod
      .post(`/api/sandbox/accounts/${a.id}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'APPROVE' });
    expect(res.status).to.equal(404);
    expect((await getAccount(c, a.id)).currentState.status).to.equal('ACTION_REQUIRED');
  });
});
