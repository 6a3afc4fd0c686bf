import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { registry } from '../../services/metrics';
import type { AccountView } from '../../presenters/account';
import {
  accountBody,
  addUbo,
  createAccount,
  documentBody,
  sandboxDecide,
  submitReview,
  uploadAllDocuments,
} from '../helpers/fixtures';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

interface ListBody {
  data: AccountView[];
  meta: { previousCursor: string | null; nextCursor: string | null; total: number };
}

/**
 * An API process answers an unfiltered account list from its copy of the page while the list's version is
 * unchanged (db/lists/page-copies.ts). Every way a listed row can change must show on the next GET: through this
 * process, through another process (another app with its own copies), by the worker, and by plain SQL.
 */
describe('GET /api/accounts from a kept copy of the page', () => {
  let c: TestCustomer;
  type Http = ReturnType<typeof supertest>;
  let other: Http; // a second API process: its own copies, the same database

  const list = async (http: Http, query: Record<string, string | number> = {}, customer = c): Promise<ListBody> => {
    const res = await http.get('/api/accounts').query(query).set(customer.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
    return res.body;
  };
  const copiesServed = async () => {
    const metric = (await registry.getSingleMetric('cambio_list_pages_total')!.get()).values.find(
      (v) => v.labels.source === 'copy',
    );
    return metric?.value ?? 0;
  };
  /** The list as both processes answer it now, each asked twice (the second answer may come from a copy). */
  async function bothAnswer(query: Record<string, string | number> = {}): Promise<ListBody> {
    const { http } = await stack();
    const first = await list(http, query);
    expect(await list(http, query)).to.deep.equal(first);
    expect(await list(other, query)).to.deep.equal(first);
    expect(await list(other, query)).to.deep.equal(first);
    return first;
  }

  before(async function () {
    this.timeout(60_000);
    const { services } = await stack();
    other = supertest(createApp(services).callback());
    c = await newCustomer('Copies Ltda');
    await createAccount(c, { legalName: 'First Ltda' });
  });

  it('answers a repeated list from the copy, identical to a fresh read', async () => {
    const { http } = await stack();
    const fresh = await list(http);
    const before = await copiesServed();
    expect(await list(http)).to.deep.equal(fresh);
    expect(await copiesServed()).to.equal(before + 1);
  });

  it('shows a new account at once, in this process and in another that kept a copy', async () => {
    await bothAnswer();
    const created = await createAccount(c, { legalName: 'Second Ltda' });
    const now = await bothAnswer();
    expect(now.data[0].id).to.equal(created.id);
    expect(now.meta.total).to.equal(2);
  });

  it('shows UBO, document, review and worker changes on the next GET', async function () {
    this.timeout(60_000);
    const { http } = await stack();
    const account = (await bothAnswer()).data[0];
    const ubo = await addUbo(c, account.id);
    expect((await bothAnswer()).data[0].owner.ubos.map((u) => u.id)).to.deep.equal([ubo.id]);

    const patched = await http
      .patch(`/api/accounts/${account.id}/ubos/${ubo.id}`)
      .set(c.auth)
      .set(idem())
      .send({ name: 'Maria Renamed' });
    expect(patched.status).to.equal(200);
    expect((await bothAnswer()).data[0].owner.ubos[0].name).to.equal('Maria Renamed');

    const uploaded = await http
      .post(`/api/accounts/${account.id}/documents`)
      .set(c.auth)
      .set(idem())
      .send(documentBody('PROOF_OF_ADDRESS'));
    expect(uploaded.status).to.equal(201);
    const pending = (await bothAnswer()).data[0].requirements.pendingVerification.map((r) => r.documentType);
    expect(pending).to.deep.equal(['PROOF_OF_ADDRESS']);

    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    expect((await bothAnswer()).data[0].currentState.status).to.equal('UNDER_REVIEW');
    // The decision is applied by the review workflow's activity, in the worker: not through either API process.
    await sandboxDecide(c, account.id, 'APPROVE');
    await eventually(
      () => list(other),
      (body) => body.data[0].currentState.status === 'ACTIVE',
    );
    const approved = await bothAnswer();
    expect(approved.data[0].currentState.status).to.equal('ACTIVE');
    expect(approved.data[0].assets.map((a) => a.status)).to.deep.equal(['ACTIVE', 'ACTIVE']);
  });

  it('shows a change written by plain SQL, as an operator or another service would', async () => {
    const { services } = await stack();
    const account = (await bothAnswer()).data[1];
    await services.orm.em
      .fork()
      .getConnection()
      .execute(`update accounts set tags = '[{"key":"desk","value":"fx","propagate":false}]' where id = ?`, [
        account.id,
      ]);
    expect((await bothAnswer()).data[1].tags).to.deep.equal([{ key: 'desk', value: 'fx' }]);
  });

  it('shows every row a transaction changed, in statements before and after its first change', async () => {
    const { services } = await stack();
    const kept = await bothAnswer();
    await services.orm.em.fork().transactional(async (tx) => {
      const run = (sql: string) => tx.getConnection().execute(sql, [c.customerId], 'run', tx.getTransactionContext());
      await run(
        `update accounts set tags = '[{"key":"desk","value":"rates","propagate":false}]' where customer_id = ?`,
      );
      await run(`update accounts set updated_at = updated_at + interval '1 second' where customer_id = ?`);
    });
    const now = await bothAnswer();
    expect(now.data.map((a) => a.tags)).to.deep.equal(kept.data.map(() => [{ key: 'desk', value: 'rates' }]));
    expect(
      now.data.map((a) => Date.parse(a.updatedAt) - Date.parse(kept.data.find((k) => k.id === a.id)!.updatedAt)),
    ).to.deep.equal(now.data.map(() => 1000));
  });

  it('keeps the copy valid when a write rolls back', async () => {
    const { services } = await stack();
    const kept = await bothAnswer();
    const em = services.orm.em.fork();
    await em
      .transactional(async (tx) => {
        await tx
          .getConnection()
          .execute(
            `update accounts set tags = '[]' where customer_id = ?`,
            [c.customerId],
            'run',
            tx.getTransactionContext(),
          );
        throw new Error('roll back');
      })
      .catch((err: Error) => expect(err.message).to.equal('roll back'));
    expect(await bothAnswer()).to.deep.equal(kept);
  });

  it('keeps each page and each order apart, and shows a new account on every page it moves', async () => {
    const first = await bothAnswer({ limit: 1 });
    const second = await bothAnswer({ limit: 1, cursor: first.meta.nextCursor!, direction: 'NEXT' });
    const ascending = await bothAnswer({ limit: 1, sortOrder: 'ASCENDING' });
    expect(new Set([first.data[0].id, second.data[0].id]).size).to.equal(2);
    expect(ascending.data[0].id).to.equal(second.data[0].id);

    const created = await createAccount(c, { legalName: 'Third Ltda' });
    expect((await bothAnswer({ limit: 1 })).data[0].id).to.equal(created.id);
    expect((await bothAnswer({ limit: 1, cursor: first.meta.nextCursor!, direction: 'NEXT' })).meta.total).to.equal(3);
  });

  it("never answers one customer with another's copy", async () => {
    const { http } = await stack();
    const d = await newCustomer('Neighbour Ltda');
    expect((await list(http, {}, d)).data).to.deep.equal([]);
    await list(http); // c's page is kept
    const mine = await createAccount(d, { legalName: 'Neighbour One Ltda' });
    const again = await list(http, {}, d);
    expect(again.data.map((a) => a.id)).to.deep.equal([mine.id]);
    expect(again.data.every((a) => a.customer.id === d.customerId)).to.equal(true);
    expect((await list(http)).data.every((a) => a.customer.id === c.customerId)).to.equal(true);
  });

  it('reads filtered lists every time and still answers them correctly', async () => {
    const { http } = await stack();
    const filters = 'owner.legalName[eq]=Fourth Ltda';
    expect((await list(http, { filters })).data).to.deep.equal([]);
    const created = await http
      .post('/api/accounts')
      .set(c.auth)
      .set(idem())
      .send(accountBody({ legalName: 'Fourth Ltda' }));
    expect(created.status).to.equal(201);
    expect((await list(http, { filters })).data.map((a) => a.id)).to.deep.equal([created.body.id]);
  });
});
