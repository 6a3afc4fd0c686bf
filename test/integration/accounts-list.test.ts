import { expect } from 'chai';
import { tenantEm } from '../../db/orm';
import { tagAccount } from '../../services/accounts';
import type { AccountView } from '../../presenters/account';
import { newCustomer, stack, TestCustomer } from '../helpers/stack';
import { addUbo, createAccount, getAccount, uploadAllDocuments } from '../helpers/fixtures';

interface ListBody {
  data: AccountView[];
  meta: { previousCursor: string | null; nextCursor: string | null; total: number };
}

describe('GET /api/accounts', () => {
  let c: TestCustomer;
  let all: AccountView[]; // newest first, as the default DESCENDING list returns them
  const NAMES = ['Alpha', 'Beta', 'Gamma'];

  async function list(
    query: Record<string, string | number>,
  ): Promise<{ status: number; body: ListBody & { code?: string; message?: string } }> {
    const { http } = await stack();
    return http.get('/api/accounts').query(query).set(c.auth);
  }
  const ids = (body: ListBody) => body.data.map((a) => a.id);

  before(async function () {
    this.timeout(120_000);
    const { services } = await stack();
    c = await newCustomer('Lists Ltda');
    const created: AccountView[] = [];
    for (let i = 0; i < 25; i++) created.push(await createAccount(c, { legalName: NAMES[i % 3] }));
    const em = tenantEm(services.orm, c.customerId);
    // Every 5th account is tagged team=ops (propagating), every 5th+1 team=risk.
    for (let i = 0; i < 25; i += 5)
      await tagAccount(em.fork(), created[i].id, { key: 'team', value: 'ops', propagate: true });
    for (let i = 1; i < 25; i += 5)
      await tagAccount(em.fork(), created[i].id, { key: 'team', value: 'risk', propagate: false });
    const res = await list({ limit: 100 });
    all = res.body.data;
  });

  it('returns 10 by default, newest first, with the total', async () => {
    expect(all).to.have.length(25);
    const res = await list({});
    expect(res.status).to.equal(200);
    expect(ids(res.body)).to.deep.equal(all.slice(0, 10).map((a) => a.id));
    expect(res.body.meta.total).to.equal(25);
    expect(res.body.meta.previousCursor).to.equal(null);
    expect(res.body.meta.nextCursor).to.be.a('string');
  });

  for (const limit of [0, 101, 'ten']) {
    it(`refuses limit=${limit} with 400 VALIDATION_ERROR`, async () => {
      const res = await list({ limit });
      expect([res.status, res.body.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    });
  }

  it('walks NEXT then PREVIOUS through every page without gaps or duplicates', async () => {
    const forward: string[] = [];
    const cursors: Array<string | null> = [];
    let res = await list({ limit: 7 });
    for (;;) {
      forward.push(...ids(res.body));
      cursors.push(res.body.meta.previousCursor);
      if (!res.body.meta.nextCursor) break;
      res = await list({ limit: 7, cursor: res.body.meta.nextCursor, direction: 'NEXT' });
    }
    expect(forward).to.deep.equal(all.map((a) => a.id));
    expect(cursors[0]).to.equal(null);

    const backward: string[][] = [ids(res.body)];
    while (res.body.meta.previousCursor) {
      res = await list({ limit: 7, cursor: res.body.meta.previousCursor, direction: 'PREVIOUS' });
      backward.unshift(ids(res.body));
    }
    expect(backward.flat()).to.deep.equal(forward);
    expect(backward[0]).to.have.length(7);
  });

  it('sorts ASCENDING on request', async () => {
    const res = await list({ limit: 100, sortOrder: 'ASCENDING' });
    expect(ids(res.body)).to.deep.equal([...all].reverse().map((a) => a.id));
  });

  it('shows tags as key and value only', () => {
    const tagged = all.find((a) => a.tags.length > 0)!;
    expect(tagged.tags).to.have.length(1);
    expect(Object.keys(tagged.tags[0]).sort()).to.deep.equal(['key', 'value']);
  });

  const expectIds = async (filters: string, expected: (a: AccountView) => boolean) => {
    const res = await list({ limit: 100, filters });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const want = all.filter(expected).map((a) => a.id);
    expect(ids(res.body), filters).to.deep.equal(want);
    expect(res.body.meta.total, filters).to.equal(want.length);
  };
  const team = (a: AccountView) => a.tags.find((t) => t.key === 'team')?.value;

  it('filters by owner.legalName, currentState.status and createdAt', async () => {
    await expectIds('owner.legalName[eq]=Alpha', (a) => a.owner.legalName === 'Alpha');
    await expectIds('owner.legalName[in]=Alpha|Gamma', (a) => a.owner.legalName !== 'Beta');
    await expectIds('currentState.status[eq]=ACTION_REQUIRED', () => true);
    await expectIds('currentState.status[eq]=ACTIVE', () => false);
    const pivot = all[12].createdAt;
    await expectIds(`createdAt[gte]=${pivot}`, (a) => a.createdAt >= pivot);
  });

  it('filters by tags.key and tags.value, combined with and(), or() and ;', async () => {
    await expectIds('tags.value[eq]=ops', (a) => team(a) === 'ops');
    await expectIds('tags.key[eq]=team', (a) => team(a) !== undefined);
    await expectIds('tags.value[ne]=ops', (a) => team(a) !== 'ops');
    await expectIds(
      'tags.value[eq]=ops;owner.legalName[eq]=Alpha',
      (a) => team(a) === 'ops' && a.owner.legalName === 'Alpha',
    );
    await expectIds(
      'or(tags.value[eq]=risk,owner.legalName[eq]=Beta)',
      (a) => team(a) === 'risk' || a.owner.legalName === 'Beta',
    );
    await expectIds(
      'and(or(tags.value[eq]=risk,tags.value[eq]=ops),owner.legalName[ne]=Gamma)',
      (a) => team(a) !== undefined && a.owner.legalName !== 'Gamma',
    );
  });

  it('pages through a filtered set with the filtered total', async () => {
    const want = all.filter((a) => a.owner.legalName === 'Beta').map((a) => a.id);
    const first = await list({ limit: 3, filters: 'owner.legalName[eq]=Beta' });
    expect(first.body.meta.total).to.equal(want.length);
    const second = await list({ limit: 3, filters: 'owner.legalName[eq]=Beta', cursor: first.body.meta.nextCursor! });
    expect([...ids(first.body), ...ids(second.body)]).to.deep.equal(want.slice(0, 6));
  });

  it('refuses a cursor with filters other than those it was issued for, takes them again (decision 0275)', async () => {
    const beta = 'owner.legalName[eq]=Beta';
    const first = await list({ limit: 3, filters: beta });
    const cursor = first.body.meta.nextCursor!;
    // Another filter, none, or a filter on a list paged without one: each would page another set from that position.
    for (const [filters, from] of [
      ['owner.legalName[eq]=Gamma', cursor],
      [undefined, cursor],
      [beta, (await list({ limit: 3 })).body.meta.nextCursor!],
    ] as const) {
      const res = await list({ limit: 3, cursor: from, ...(filters === undefined ? {} : { filters }) });
      expect([res.status, res.body.code, res.body.message], String(filters)).to.deep.equal([
        400,
        'INVALID_CURSOR',
        'Invalid cursor: it was issued for other filters; page with the filters the first page was asked with',
      ]);
    }
    // The same filters, written again as the client first wrote them or in another spelling of the same condition.
    const want = all.filter((a) => a.owner.legalName === 'Beta').map((a) => a.id);
    for (const again of [beta, 'owner.legalName[eq]="Beta"']) {
      const second = await list({ limit: 3, filters: again, cursor });
      expect([second.status, ...ids(second.body)], again).to.deep.equal([200, ...want.slice(3, 6)]);
    }
  });

  it('refuses unknown fields, bad values and malformed filters with 400 INVALID_FILTER', async () => {
    for (const filters of [
      'owner.taxId[eq]=1',
      'currentState.status[eq]=SLEEPING',
      'createdAt[gt]=yesterday',
      'owner.legalName[like]=A',
      'and(',
    ]) {
      const res = await list({ filters });
      expect([filters, res.status, res.body.code]).to.deep.equal([filters, 400, 'INVALID_FILTER']);
    }
  });

  it('refuses a tampered cursor with 400 INVALID_CURSOR', async () => {
    const first = await list({ limit: 2 });
    const [payload, signature] = first.body.meta.nextCursor!.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), i: all[20].id }),
    ).toString('base64url');
    for (const cursor of [`${forged}.${signature}`, 'garbage', `${payload}.${signature.slice(1)}x`]) {
      const res = await list({ cursor });
      expect([res.status, res.body.code]).to.deep.equal([400, 'INVALID_CURSOR']);
    }
  });

  it('shows each account with its UBOs and documents exactly as GET /api/accounts/{id} does', async () => {
    const owner = await newCustomer('Parts Ltda');
    const account = await createAccount(owner);
    await addUbo(owner, account.id, { name: 'Maria Silva', ownershipPercentage: 40 });
    await addUbo(owner, account.id, { name: 'João Souza', ownershipPercentage: 35.5 });
    await uploadAllDocuments(owner, account.id);
    const { http } = await stack();
    const listed = (await http.get('/api/accounts').set(owner.auth)).body as ListBody;
    const single = await getAccount(owner, account.id);
    expect(single.owner.ubos).to.have.length(2);
    expect(listed.data).to.deep.equal([single]);
  });

  it('gives the total on a page past the end, which has no row to carry it', async () => {
    // The two oldest accounts are tagged; the page after the first is the oldest, until its tag changes. (A cursor
    // pages only the filters it was issued for, decision 0275: the set empties under the same filters.)
    const { services } = await stack();
    const em = tenantEm(services.orm, c.customerId);
    for (const account of all.slice(23))
      await tagAccount(em.fork(), account.id, { key: 'page', value: 'end', propagate: false });
    const filters = 'tags.value[eq]=end';
    const first = await list({ limit: 1, filters });
    expect(ids(first.body)).to.deep.equal([all[23].id]);
    await tagAccount(em.fork(), all[24].id, { key: 'page', value: 'moved', propagate: false });
    const beyond = await list({ limit: 5, cursor: first.body.meta.nextCursor!, filters });
    expect(beyond.status).to.equal(200);
    expect(beyond.body.data).to.deep.equal([]);
    expect(beyond.body.meta.total).to.equal(1);
    const none = await list({ filters: 'owner.legalName[eq]=Nobody' });
    expect([none.body.data.length, none.body.meta.total]).to.deep.equal([0, 0]);
  });
});
