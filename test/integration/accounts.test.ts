import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import {
  accountBody,
  addUbo,
  createAccount,
  documentBody,
  getAccount,
  uboBody,
  validAlphanumericCnpj,
  validCnpj,
  validCpf,
  withWrongCheckDigit,
} from '../helpers/fixtures';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function post(c: TestCustomer, path: string, body?: object, key = randomUUID()) {
  const { http } = await stack();
  const req = http.post(path).set(c.auth).set('X-Idempotency-Key', key);
  return body === undefined ? req : req.send(body);
}

const expectValidation = (
  res: { status: number; body: { code: string; details: { errors: Array<{ path: string }> } } },
  path?: string,
) => {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body.code).to.equal('VALIDATION_ERROR');
  if (path) expect(res.body.details.errors.map((e) => e.path)).to.include(path);
};

describe('accounts', () => {
  let c: TestCustomer;
  before(async () => {
    c = await newCustomer('Accounts Ltda');
  });

  describe('POST /api/accounts', () => {
    it('creates an ACTION_REQUIRED account with ONBOARDING assets, in the documented shape', async () => {
      const cnpj = validCnpj();
      const body = accountBody({
        assets: ['BRL', { code: 'USDC', isVirtual: true }],
        taxId: { value: cnpj, type: 'CNPJ' },
      });
      const res = await post(c, '/api/accounts', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const a = res.body;
      expect(Object.keys(a).sort()).to.deep.equal([
        'assets',
        'createdAt',
        'currentState',
        'customer',
        'id',
        'owner',
        'requirements',
        'sourceAccountId',
        'states',
        'tags',
        'updatedAt',
      ]);
      expect(a.id).to.match(UUID);
      expect(a.customer).to.deep.equal({ id: c.customerId });
      expect(a.owner).to.deep.equal({ ...body.owner, taxId: { value: cnpj, type: 'CNPJ' }, ubos: [] });
      expect(a.assets).to.deep.equal([
        { asset: 'BRL', allowsVirtualAccounts: false, status: 'ONBOARDING' },
        { asset: 'USDC', allowsVirtualAccounts: true, status: 'ONBOARDING' },
      ]);
      expect(a.tags).to.deep.equal([]);
      expect(a.sourceAccountId).to.equal(null);
      expect(a.currentState.status).to.equal('ACTION_REQUIRED');
      expect(a.states).to.deep.equal([a.currentState]);
      expect(a.createdAt).to.match(ISO);
      expect(a.updatedAt).to.equal(a.createdAt);
      expect(a.requirements.currentlyDue.map((r: { documentType: string }) => r.documentType)).to.deep.equal([
        'CERTIFICATE_OF_INCORPORATION',
        'PROOF_OF_ADDRESS',
      ]);
      expect(a.requirements).to.deep.include({ pendingVerification: [], errors: [], satisfied: [] });
      expect(await getAccount(c, a.id)).to.deep.equal(a);
    });

    it('accepts an alphanumeric CNPJ, and a CPF owner, storing the bare upper-case id', async () => {
      const alnum = validAlphanumericCnpj();
      const masked =
        `${alnum.slice(0, 2)}.${alnum.slice(2, 5)}.${alnum.slice(5, 8)}/` + `${alnum.slice(8, 12)}-${alnum.slice(12)}`;
      const res = await post(c, '/api/accounts', accountBody({ taxId: { value: masked.toLowerCase(), type: 'CNPJ' } }));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.owner.taxId).to.deep.equal({ value: alnum, type: 'CNPJ' });
      expect(
        (await post(c, '/api/accounts', accountBody({ taxId: { value: validCpf(), type: 'CPF' } }))).status,
      ).to.equal(201);
    });

    const invalid: Array<[string, (b: ReturnType<typeof accountBody>) => unknown, string]> = [
      [
        'a CNPJ with a wrong check digit',
        (b) => ({ ...b, owner: { ...b.owner, taxId: { value: withWrongCheckDigit(validCnpj()), type: 'CNPJ' } } }),
        '/owner/taxId/value',
      ],
      [
        'a CPF typed as CNPJ',
        (b) => ({ ...b, owner: { ...b.owner, taxId: { value: validCpf(), type: 'CNPJ' } } }),
        '/owner/taxId/value',
      ],
      ['an unknown industry', (b) => ({ ...b, owner: { ...b.owner, industry: 'PIRACY' } }), '/owner/industry'],
      [
        'duplicate asset codes',
        (b) => ({
          ...b,
          assets: [
            { code: 'BRL', isVirtual: false },
            { code: 'BRL', isVirtual: true },
          ],
        }),
        '/assets/1/code',
      ],
      ['no assets', (b) => ({ ...b, assets: [] }), '/assets'],
      ['an unknown asset', (b) => ({ ...b, assets: [{ code: 'DOGE', isVirtual: false }] }), '/assets/0/code'],
      ['an unknown property', (b) => ({ ...b, nickname: 'x' }), '/nickname'],
      [
        'an impossible incorporateDate',
        (b) => ({ ...b, owner: { ...b.owner, incorporateDate: '2021-02-30' } }),
        '/owner/incorporateDate',
      ],
      [
        'a lower-case country',
        (b) => ({ ...b, owner: { ...b.owner, address: { ...b.owner.address, country: 'br' } } }),
        '/owner/address/country',
      ],
    ];
    for (const [name, mutate, path] of invalid) {
      it(`rejects ${name} with 400 VALIDATION_ERROR at ${path}`, async () => {
        expectValidation(await post(c, '/api/accounts', mutate(accountBody()) as object), path);
      });
    }

    it('requires X-Idempotency-Key', async () => {
      const { http } = await stack();
      const res = await http.post('/api/accounts').set(c.auth).send(accountBody());
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('MISSING_IDEMPOTENCY_KEY');
    });

    it('replays the same request, refuses the same key for another body', async () => {
      const key = randomUUID();
      const body = accountBody();
      const first = await post(c, '/api/accounts', body, key);
      const again = await post(c, '/api/accounts', body, key);
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      const other = await post(c, '/api/accounts', accountBody(), key);
      expect(other.status).to.equal(422);
      expect(other.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    });

    it('creates exactly one account for 10 concurrent requests with one key', async () => {
      const { http } = await stack();
      const solo = await newCustomer('Concurrent Ltda');
      const key = randomUUID();
      const body = accountBody();
      const results = await Promise.all(Array.from({ length: 10 }, () => post(solo, '/api/accounts', body, key)));
      const created = results.filter((r) => r.status === 201);
      expect(created.filter((r) => r.headers['idempotent-replayed'] !== 'true')).to.have.length(1);
      for (const r of results.filter((x) => x.status !== 201))
        expect([r.status, r.body.code]).to.deep.equal([409, 'IDEMPOTENCY_KEY_IN_USE']);
      expect(new Set(created.map((r) => r.body.id)).size).to.equal(1);
      const list = await http.get('/api/accounts').set(solo.auth);
      expect(list.body.meta.total).to.equal(1);
      expect(list.body.data[0].id).to.equal(created[0].body.id);
    });
  });

  describe('HTTP conventions', () => {
    for (const version of [undefined, '', '99', '1']) {
      it(`answers X-Service-Version 1 when asked for ${JSON.stringify(version)}`, async () => {
        const { http } = await stack();
        const req = http.get('/api/accounts').set(c.auth);
        const res = await (version === undefined ? req : req.set('X-Service-Version', version));
        expect(res.status).to.equal(200);
        expect(res.headers['x-service-version']).to.equal('1');
      });
    }

    it('answers 415 to a text/plain body and 413 past 1 MiB', async () => {
      const { http } = await stack();
      const text = await http
        .post('/api/accounts')
        .set(c.auth)
        .set(idem())
        .set('Content-Type', 'text/plain')
        .send('hello');
      expect([text.status, text.body.code]).to.deep.equal([415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect(text.headers['x-service-version'], 'errors carry the served version too').to.equal('1');
      // A compressed body, and a plain one that says it is compressed: 415 naming the coding read (decision 0334).
      const json = Buffer.from(JSON.stringify(accountBody()));
      for (const body of [gzipSync(json), json]) {
        const coded = await http
          .post('/api/accounts')
          .set(c.auth)
          .set(idem())
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', 'gzip')
          .send(body);
        expect([coded.status, coded.body.code, coded.headers['accept-encoding']]).to.deep.equal([
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          'identity',
        ]);
      }
      const big = { ...accountBody(), padding: 'x'.repeat(1024 * 1024 + 10) };
      const large = await http.post('/api/accounts').set(c.auth).set(idem()).send(big);
      expect([large.status, large.body.code]).to.deep.equal([413, 'PAYLOAD_TOO_LARGE']);
    });
  });

  describe('UBOs', () => {
    it('adds a PENDING UBO, which adds an ID_DOCUMENT requirement', async () => {
      const a = await createAccount(c);
      const body = uboBody({ taxId: { value: validCpf(), type: 'CPF' } });
      const res = await post(c, `/api/accounts/${a.id}/ubos`, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal([
        'address',
        'currentState',
        'id',
        'name',
        'ownershipPercentage',
        'taxId',
      ]);
      expect(res.body).to.deep.include({
        name: body.name,
        taxId: body.taxId,
        address: body.address,
        ownershipPercentage: 60,
      });
      expect(res.body.currentState.status).to.equal('PENDING');
      const after = await getAccount(c, a.id);
      expect(after.owner.ubos).to.deep.equal([res.body]);
      expect(after.requirements.currentlyDue.find((r) => r.documentType === 'ID_DOCUMENT')).to.include({
        uboId: res.body.id,
        group: 'UBO',
      });
    });

    it('patches only the given fields; ownershipPercentage may be null', async () => {
      const a = await createAccount(c);
      const ubo = await addUbo(c, a.id);
      const { http } = await stack();
      const patched = await http
        .patch(`/api/accounts/${a.id}/ubos/${ubo.id}`)
        .set(c.auth)
        .set(idem())
        .send({ name: 'Maria S. Souza', ownershipPercentage: null });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body).to.deep.equal({ ...ubo, name: 'Maria S. Souza', ownershipPercentage: null });
      const bad = await http
        .patch(`/api/accounts/${a.id}/ubos/${ubo.id}`)
        .set(c.auth)
        .set(idem())
        .send({ taxId: { value: withWrongCheckDigit(validCpf()), type: 'CPF' } });
      expectValidation(bad, '/taxId/value');
      const missing = await http
        .patch(`/api/accounts/${a.id}/ubos/${randomUUID()}`)
        .set(c.auth)
        .set(idem())
        .send({ name: 'x' });
      expect(missing.status).to.equal(404);
    });

    it("a new tax id makes the UBO's ID document due again: the one uploaded was another person's", async () => {
      const a = await createAccount(c);
      const ubo = await addUbo(c, a.id);
      const { http } = await stack();
      const upload = await post(c, `/api/accounts/${a.id}/documents`, documentBody('ID_DOCUMENT', ubo.id));
      expect(upload.status, JSON.stringify(upload.body)).to.equal(201);
      const renamed = await http
        .patch(`/api/accounts/${a.id}/ubos/${ubo.id}`)
        .set(c.auth)
        .set(idem())
        .send({ name: 'Maria S. Souza', address: { ...ubo.address, city: 'Campinas' } });
      expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      const idDocument = (x: Awaited<ReturnType<typeof getAccount>>) =>
        Object.entries(x.requirements).flatMap(([where, list]) =>
          (list as Array<{ uboId: string | null; reason: { details: object } | null }>)
            .filter((r) => r.uboId === ubo.id)
            .map((r) => [where, r.reason?.details ?? null]),
        );
      // A spelling or an address is not an identity: the document still stands.
      expect(idDocument(await getAccount(c, a.id))).to.deep.equal([['pendingVerification', null]]);

      const replaced = await http
        .patch(`/api/accounts/${a.id}/ubos/${ubo.id}`)
        .set(c.auth)
        .set(idem())
        .send({ taxId: { value: validCpf(), type: 'CPF' } });
      expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
      expect(idDocument(await getAccount(c, a.id))).to.deep.equal([['errors', { documentId: upload.body.id }]]);
      const review = await post(c, `/api/accounts/${a.id}/review`);
      expect([review.status, review.body.code]).to.deep.equal([422, 'REQUIREMENTS_NOT_MET']);

      const again = await post(c, `/api/accounts/${a.id}/documents`, documentBody('ID_DOCUMENT', ubo.id));
      expect(again.status, JSON.stringify(again.body)).to.equal(201);
      expect(idDocument(await getAccount(c, a.id))).to.deep.equal([['pendingVerification', null]]);
    });

    it('validates tax ids, percentages and total ownership', async () => {
      const a = await createAccount(c);
      expectValidation(
        await post(
          c,
          `/api/accounts/${a.id}/ubos`,
          uboBody({ taxId: { value: withWrongCheckDigit(validCpf()), type: 'CPF' } }),
        ),
        '/taxId/value',
      );
      expectValidation(
        await post(c, `/api/accounts/${a.id}/ubos`, uboBody({ ownershipPercentage: 101 })),
        '/ownershipPercentage',
      );
      await addUbo(c, a.id, { ownershipPercentage: 60 });
      expectValidation(
        await post(c, `/api/accounts/${a.id}/ubos`, uboBody({ ownershipPercentage: 40.5 })),
        '/ownershipPercentage',
      );
      expect((await post(c, `/api/accounts/${a.id}/ubos`, uboBody({ ownershipPercentage: 40 }))).status).to.equal(201);
    });
  });

  describe('documents', () => {
    it('moves a requirement to pendingVerification and returns the record without content', async () => {
      const a = await createAccount(c);
      const res = await post(c, `/api/accounts/${a.id}/documents`, documentBody('PROOF_OF_ADDRESS'));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(Object.keys(res.body).sort()).to.deep.equal([
        'contentType',
        'createdAt',
        'documentType',
        'fileName',
        'id',
        'size',
        'status',
        'uboId',
      ]);
      expect(res.body).to.include({
        documentType: 'PROOF_OF_ADDRESS',
        uboId: null,
        status: 'PENDING_VERIFICATION',
        size: 22,
      });
      const after = await getAccount(c, a.id);
      expect(after.requirements.pendingVerification.map((r) => r.documentType)).to.deep.equal(['PROOF_OF_ADDRESS']);
      expect(after.requirements.currentlyDue.map((r) => r.documentType)).to.deep.equal([
        'CERTIFICATE_OF_INCORPORATION',
      ]);
    });

    it('accepts up to 5 MiB decoded and refuses more, bad base64 and documents the account does not need', async () => {
      const a = await createAccount(c);
      const ubo = await addUbo(c, a.id);
      const fiveMiB = Buffer.alloc(5 * 1024 * 1024, 7).toString('base64');
      const ok = await post(
        c,
        `/api/accounts/${a.id}/documents`,
        documentBody('CERTIFICATE_OF_INCORPORATION', undefined, fiveMiB),
      );
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      const tooBig = Buffer.alloc(5 * 1024 * 1024 + 1, 7).toString('base64');
      expectValidation(
        await post(c, `/api/accounts/${a.id}/documents`, documentBody('PROOF_OF_ADDRESS', undefined, tooBig)),
        '/content',
      );
      expectValidation(
        await post(c, `/api/accounts/${a.id}/documents`, documentBody('PROOF_OF_ADDRESS', undefined, 'not base64!')),
        '/content',
      );
      expectValidation(await post(c, `/api/accounts/${a.id}/documents`, documentBody('ID_DOCUMENT')), '/uboId');
      expectValidation(
        await post(c, `/api/accounts/${a.id}/documents`, documentBody('ID_DOCUMENT', randomUUID())),
        '/uboId',
      );
      expectValidation(
        await post(c, `/api/accounts/${a.id}/documents`, documentBody('PROOF_OF_ADDRESS', ubo.id)),
        '/uboId',
      );
      expectValidation(await post(c, `/api/accounts/${a.id}/documents`, documentBody('PASSPORT')), '/documentType');
      expect((await post(c, `/api/accounts/${a.id}/documents`, documentBody('ID_DOCUMENT', ubo.id))).status).to.equal(
        201,
      );
    });

    it('takes a document over 1 MiB at the path with a trailing slash, which the route also serves', async () => {
      const a = await createAccount(c);
      const twoMiB = Buffer.alloc(2 * 1024 * 1024, 7).toString('base64');
      const res = await post(
        c,
        `/api/accounts/${a.id}/documents/`,
        documentBody('PROOF_OF_ADDRESS', undefined, twoMiB),
      );
      expect([res.status, res.body.size, res.body.code]).to.deep.equal([201, 2 * 1024 * 1024, undefined]);
    });
  });

  describe('isolation', () => {
    it("never shows or touches another customer's account", async () => {
      const { http } = await stack();
      const a = await createAccount(c);
      const other = await newCustomer('Other Ltda');
      expect((await http.get(`/api/accounts/${a.id}`).set(other.auth)).status).to.equal(404);
      for (const [path, body] of [
        [`/api/accounts/${a.id}/ubos`, uboBody()],
        [`/api/accounts/${a.id}/documents`, documentBody('PROOF_OF_ADDRESS')],
        [`/api/accounts/${a.id}/review`, undefined],
        [`/api/sandbox/accounts/${a.id}/review`, { decision: 'APPROVE' }],
      ] as Array<[string, object | undefined]>) {
        const res = await post(other, path, body);
        expect([path, res.status, res.body.code]).to.deep.equal([path, 404, 'NOT_FOUND']);
      }
      await createAccount(other);
      const list = await http.get('/api/accounts').query({ limit: 100 }).set(other.auth);
      expect(list.body.meta.total).to.equal(1);
      expect(list.body.data.map((x: { id: string }) => x.id)).not.to.include(a.id);
    });
  });
});
