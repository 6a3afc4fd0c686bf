// What the outside fuzzer found, as a client sees it: bad text, huge amounts and odd dates are the client's
// 400 with the path at fault, never a 500 from Postgres.
import { expect } from 'chai';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { accountBody, activeAccount, createAccount, uboBody } from '../helpers/fixtures';
import { balance, fund } from '../helpers/money';
import { beneficiaryBody, individualHolder } from '../helpers/beneficiary-fixtures';

describe('input hygiene at the schema', () => {
  let customer: TestCustomer;
  let accountId: string;

  before(async () => {
    customer = await newCustomer();
    accountId = (await createAccount(customer)).id;
  });

  it('refuses a NUL or a lone surrogate in any text field with VALIDATION_ERROR and its path', async () => {
    const { http } = await stack();
    const body = accountBody();
    const nul = await http
      .post('/api/accounts')
      .set(customer.auth)
      .set(idem())
      .send({ ...body, owner: { ...body.owner, legalName: 'Acme\u0000' } });
    expect(nul.status).to.equal(400);
    expect(nul.body.code).to.equal('VALIDATION_ERROR');
    expect(nul.body.details.errors).to.deep.equal([
      { path: '/owner/legalName', message: 'must not contain NUL characters' },
    ]);
    const surrogate = await http
      .post('/api/beneficiaries')
      .set(customer.auth)
      .set(idem())
      .send(beneficiaryBody(undefined, { holder: individualHolder({ lastName: 'Silva\ud800' }) }));
    expect(surrogate.status).to.equal(400);
    expect(surrogate.body.details.errors[0].path).to.equal('/holder/lastName');
    const filter = await http.get('/api/accounts').query({ filters: 'owner.legalName[eq]=a\u0000' }).set(customer.auth);
    expect(filter.status).to.equal(400);
    expect(filter.body.details.errors[0].path).to.equal('/query/filters');
  });

  it('refuses controls, bidi and invisible characters in names and text, keeps every script (0274)', async () => {
    const { http } = await stack();
    const pendingAccountId = (await createAccount(customer)).id;
    // Each bad character, in each place a customer names someone: the owner, a UBO, a beneficiary, a filter.
    const refused: Array<[string, string, string]> = [
      ['BEL', 'Acme\u0007 Ltda', 'must not contain control characters (U+0007)'],
      ['CR LF (a forged log line)', 'Acme\r\nINFO approved', 'must not contain control characters (U+000D)'],
      ['TAB (a shifted CSV column)', 'Acme\tLtda', 'must not contain control characters (U+0009)'],
      ['ESC (a terminal escape)', '\u001b[2JAcme', 'must not contain control characters (U+001B)'],
      ['DEL', 'Acme\u007f', 'must not contain control characters (U+007F)'],
      ['C1 NEL', 'Acme\u0085Ltda', 'must not contain control characters (U+0085)'],
      ['line separator', 'Acme\u2028Ltda', 'must not contain control characters (U+2028)'],
      ['right-to-left override', 'Acme \u202eadtL', 'must not contain bidirectional formatting characters (U+202E)'],
      ['right-to-left isolate', '\u2067Acme\u2069', 'must not contain bidirectional formatting characters (U+2067)'],
      ['right-to-left mark', 'Acme\u200f', 'must not contain bidirectional formatting characters (U+200F)'],
      ['zero-width space', 'Ac\u200bme', 'must not contain invisible characters (U+200B)'],
      ['word joiner', 'Ac\u2060me', 'must not contain invisible characters (U+2060)'],
      ['byte order mark inside', 'Ac\ufeffme', 'must not contain invisible characters (U+FEFF)'],
    ];
    for (const [what, name, message] of refused) {
      const attempts = [
        {
          path: '/owner/legalName',
          res: await http
            .post('/api/accounts')
            .set(customer.auth)
            .set(idem())
            .send(accountBody({ legalName: name })),
        },
        {
          path: '/name',
          res: await http
            .post(`/api/accounts/${pendingAccountId}/ubos`)
            .set(customer.auth)
            .set(idem())
            .send(uboBody({ name })),
        },
        {
          path: '/holder/firstName',
          res: await http
            .post('/api/beneficiaries')
            .set(customer.auth)
            .set(idem())
            .send(beneficiaryBody(undefined, { holder: individualHolder({ firstName: name }) })),
        },
        {
          path: '/query/filters',
          res: await http
            .get('/api/accounts')
            .query({ filters: `owner.legalName[eq]=${name}` })
            .set(customer.auth),
        },
      ];
      for (const { path, res } of attempts) {
        expect([res.status, res.body.code, res.body.details?.errors], `${what} at ${path}`).to.deep.equal([
          400,
          'VALIDATION_ERROR',
          [{ path, message }],
        ]);
        expect(res.body.message, `${what} at ${path}`).to.equal(`${path} ${message}`);
      }
    }
    // Names in any script, with the joiners Persian, Indic scripts and emoji sequences need, are stored as written.
    const taken = [
      'Comércio Exterior Ltda',
      'Ñandú Ação Crème Brûlée',
      '北京贸易有限公司',
      'Família 👨\u200d👩\u200d👧 Ltda',
      'می\u200cخواهم',
      'क्\u200dष',
      'שלום עולם',
      'شركة التجارة',
      "O'Brien & Søn — Zoë",
    ];
    for (const legalName of taken) {
      const res = await http.post('/api/accounts').set(customer.auth).set(idem()).send(accountBody({ legalName }));
      expect([res.status, res.body.owner?.legalName], JSON.stringify(res.body)).to.deep.equal([201, legalName]);
    }
  });

  it('refuses a body that is not UTF-8 instead of storing U+FFFD in its place (decision 0265)', async () => {
    const { http } = await stack();
    const body = accountBody({ legalName: 'Comércio Exterior Ltda' });
    const before = (await http.get('/api/accounts').set(customer.auth)).body.meta.total;
    // A client that wrote its body in Latin-1: é is the single byte 0xE9, which no UTF-8 text holds.
    for (const type of ['application/json; charset=iso-8859-1', 'application/json']) {
      const latin1 = await http
        .post('/api/accounts')
        .set(customer.auth)
        .set(idem())
        .set('Content-Type', type)
        // As bytes: superagent would otherwise write a Buffer as JSON.
        .serialize((raw) => raw)
        .send(Buffer.from(JSON.stringify(body), 'latin1'));
      expect([latin1.status, latin1.body.code], JSON.stringify(latin1.body)).to.deep.equal([400, 'VALIDATION_ERROR']);
      expect(latin1.body.message).to.equal('request body is not valid UTF-8');
      expect(latin1.body.details.errors).to.deep.equal([{ path: '', message: 'is not valid UTF-8' }]);
    }
    expect((await http.get('/api/accounts').set(customer.auth)).body.meta.total).to.equal(before);
    // The same body in UTF-8 is taken as written, and so is one that starts with a byte order mark (RFC 8259 8.1).
    for (const prefix of ['', '\ufeff']) {
      const utf8 = await http
        .post('/api/accounts')
        .set(customer.auth)
        .set(idem())
        .set('Content-Type', 'application/json; charset=utf-8')
        .serialize((raw) => raw)
        .send(Buffer.from(prefix + JSON.stringify(body), 'utf8'));
      expect(utf8.status, JSON.stringify(utf8.body)).to.equal(201);
      expect(utf8.body.owner.legalName).to.equal('Comércio Exterior Ltda');
    }
  });

  it('refuses a query value whose percent-encoding is not UTF-8 instead of searching for U+FFFD (0265)', async () => {
    const { http } = await stack();
    await createAccount(customer, { legalName: 'Comércio Exterior Ltda' });
    // `é` percent-encoded from Latin-1 (%E9), an overlong `/` (%C0%AF), a lone surrogate (%ED%A0%80), a bare `%`.
    for (const value of ['Com%E9rcio', '%C0%AF', 'x%ED%A0%80', '100%', '%zz']) {
      const res = await http.get(`/api/accounts?filters=owner.legalName[eq]=${value}`).set(customer.auth);
      expect([res.status, res.body.code], `${value}: ${JSON.stringify(res.body)}`).to.deep.equal([
        400,
        'VALIDATION_ERROR',
      ]);
      expect(res.body.details.errors, value).to.deep.equal([
        { path: '/query/filters', message: 'is not valid percent-encoded UTF-8' },
      ]);
    }
    const utf8 = await http
      .get(`/api/accounts?filters=owner.legalName[eq]=${encodeURIComponent('Comércio Exterior Ltda')}`)
      .set(customer.auth);
    expect([utf8.status, utf8.body.data?.[0]?.owner.legalName]).to.deep.equal([200, 'Comércio Exterior Ltda']);
  });

  it('refuses a body that names a property twice, with the path of the second (decision 0266)', async () => {
    const { http } = await stack();
    const [from, to] = [await activeAccount(customer, ['BRL']), await activeAccount(customer, ['BRL'])];
    await fund(customer, from.id, 'BRL', '100.00');
    // Read first-wins (a gateway, a log, the client's own library) this moves 1.00; read last-wins, 50.00.
    const amounts = [
      `{"value":"1.00","asset":"BRL","value":"50.00"}`,
      // The same name written with an escape is the same name.
      `{"value":"1.00","asset":"BRL","\\u0076alue":"50.00"}`,
    ];
    for (const amount of amounts) {
      const transfer = await http
        .post('/api/operations/transfer')
        .set(customer.auth)
        .set(idem())
        .set('Content-Type', 'application/json')
        .send(`{"sourceAccountId":"${from.id}","targetAccountId":"${to.id}","amount":${amount}}`);
      expect([transfer.status, transfer.body.code], JSON.stringify(transfer.body)).to.deep.equal([
        400,
        'VALIDATION_ERROR',
      ]);
      expect(transfer.body.details.errors).to.deep.equal([
        { path: '/amount/value', message: 'is given more than once' },
      ]);
    }
    const quoted = await http
      .post('/api/quotes')
      .set(customer.auth)
      .set(idem())
      .set('Content-Type', 'application/json')
      .send(
        `{"sourceAmount":"9.00","accountId":"${from.id}","sourceAsset":"BRL","targetAsset":"BRL",` +
          `"sourceAmount":"1.00"}`,
      );
    expect([quoted.status, quoted.body.details?.errors], JSON.stringify(quoted.body)).to.deep.equal([
      400,
      [{ path: '/sourceAmount', message: 'is given more than once' }],
    ]);
    expect(await balance(customer, from.id, 'BRL')).to.deep.equal({
      available: '100.00',
      held: '0.00',
      total: '100.00',
    });
    // Each name once, in any order and spacing: the transfer goes through.
    const fine = await http
      .post('/api/operations/transfer')
      .set(customer.auth)
      .set(idem())
      .set('Content-Type', 'application/json')
      .send(
        `{ "amount": {"asset":"BRL", "value":"1.00"}, "targetAccountId":"${to.id}", "sourceAccountId":"${from.id}" }`,
      );
    expect(fine.status, JSON.stringify(fine.body)).to.equal(201);
  });

  it('refuses a body of thousands of values or deep nesting at once, with a short answer (decision 0360)', async () => {
    const { http } = await stack();
    const many = JSON.stringify({
      ...accountBody(),
      ...Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i])),
    });
    const deep = `{"owner":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    for (const [text, message] of [
      [many, 'holds too many values (at most 5000)'],
      [deep, 'is nested too deeply (at most 16 levels)'],
    ]) {
      const res = await http
        .post('/api/accounts')
        .set(customer.auth)
        .set(idem())
        .set('Content-Type', 'application/json')
        .send(text);
      expect([res.status, res.body.code], JSON.stringify(res.body).slice(0, 300)).to.deep.equal([
        400,
        'VALIDATION_ERROR',
      ]);
      expect(res.body.details.errors).to.deep.equal([{ path: '', message }]);
      expect(res.text.length, 'a short answer').to.be.below(1000);
    }
    // A body of many unknown properties under the bound: its problems are listed, 50 at most.
    const unknown = { ...accountBody(), ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])) };
    const listed = await http.post('/api/accounts').set(customer.auth).set(idem()).send(unknown);
    expect([listed.status, listed.body.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(listed.body.details.errors).to.have.length(50);
    expect(listed.body.details.errors[0]).to.deep.equal({ path: '/k0', message: 'is not allowed' });
  });

  it('names a query parameter given more than once, whatever its type (decision 0276)', async () => {
    const { http } = await stack();
    for (const [query, path] of [
      ['limit=10&limit=20', '/query/limit'],
      ['sortOrder=ASCENDING&sortOrder=DESCENDING', '/query/sortOrder'],
      ['filters=owner.legalName[eq]=A&limit=5&filters=owner.legalName[eq]=B', '/query/filters'],
      ['limit=10&limit=10', '/query/limit'],
    ]) {
      const res = await http.get(`/api/accounts?${query}`).set(customer.auth);
      expect([res.status, res.body.code, res.body.message, res.body.details?.errors], query).to.deep.equal([
        400,
        'VALIDATION_ERROR',
        `${path} is given more than once`,
        [{ path, message: 'is given more than once' }],
      ]);
    }
    const once = await http.get('/api/accounts?limit=1&sortOrder=ASCENDING').set(customer.auth);
    expect([once.status, once.body.data?.length]).to.deep.equal([200, 1]);
  });

  it("explains what a body lacks in the API's words, never in the schema's (oneOf, else, constant)", async () => {
    const { http } = await stack();
    const quote = (amounts: object) =>
      http
        .post('/api/quotes')
        .set(customer.auth)
        .set(idem())
        .send({ accountId, sourceAsset: 'BRL', targetAsset: 'USD', ...amounts });
    const rule = { path: '', message: 'must have exactly one of sourceAmount, targetAmount' };
    const both = await quote({ sourceAmount: '1.00', targetAmount: '1.00' });
    expect([both.body.message, both.body.details.errors]).to.deep.equal([`body ${rule.message}`, [rule]]);
    const neither = await quote({});
    expect([neither.body.message, neither.body.details.errors]).to.deep.equal([`body ${rule.message}`, [rule]]);
    const withdrawal = await http
      .post('/api/operations/withdrawal')
      .set(customer.auth)
      .set(idem())
      .send({ accountId, quoteId: accountId, beneficiary: { type: 'REFERENCE', id: accountId } });
    expect(withdrawal.body.details.errors).to.deep.equal([
      { path: '/beneficiary/paymentInstruction', message: 'is required' },
    ]);
    const wrongType = await http
      .post('/api/operations/withdrawal')
      .set(customer.auth)
      .set(idem())
      .send({
        accountId,
        quoteId: accountId,
        beneficiary: { type: 'REFERENCE', id: accountId, paymentInstruction: { type: 'INLINE', id: accountId } },
      });
    expect(wrongType.body.details.errors).to.deep.equal([
      { path: '/beneficiary/paymentInstruction/type', message: 'must be REFERENCE' },
    ]);
    for (const res of [both, neither, withdrawal, wrongType]) {
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.not.match(/schema|oneOf|constant/);
    }
  });

  it('refuses an amount past 15 integer digits with INVALID_AMOUNT, requested or derived', async () => {
    const { http } = await stack();
    const huge = await http
      .post('/api/quotes')
      .set(customer.auth)
      .set(idem())
      .send({ accountId, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: `${'9'.repeat(33)}.00` });
    expect(huge.status).to.equal(400);
    expect(huge.body.code).to.equal('INVALID_AMOUNT');
    expect(huge.body.details.path).to.equal('/sourceAmount');
    // Within bounds as asked, but 57.5 times larger once converted.
    const derived = await http
      .post('/api/quotes')
      .set(customer.auth)
      .set(idem())
      .send({ accountId, sourceAsset: 'USD', targetAsset: 'PHP', sourceAmount: '999999999999999.00' });
    expect(derived.status).to.equal(400);
    expect(derived.body.code).to.equal('INVALID_AMOUNT');
    expect(derived.body.details.path).to.equal('/targetAmount');
    const largest = await http
      .post('/api/quotes')
      .set(customer.auth)
      .set(idem())
      .send({ accountId, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '999999999999999.99' });
    expect(largest.status, JSON.stringify(largest.body)).to.equal(201);
    const precision = await http
      .post('/api/quotes')
      .set(customer.auth)
      .set(idem())
      .send({ accountId, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '1.001' });
    expect(precision.body.code).to.equal('INVALID_AMOUNT_PRECISION');
  });

  it('refuses dates of birth and incorporation before 1900', async () => {
    const { http } = await stack();
    const body = accountBody();
    const old = await http
      .post('/api/accounts')
      .set(customer.auth)
      .set(idem())
      .send({ ...body, owner: { ...body.owner, incorporateDate: '1899-12-31' } });
    expect(old.status).to.equal(400);
    expect(old.body.details.errors[0].path).to.equal('/owner/incorporateDate');
    const born = await http
      .post('/api/beneficiaries')
      .set(customer.auth)
      .set(idem())
      .send(beneficiaryBody(undefined, { holder: individualHolder({ dateOfBirth: '0001-01-01' }) }));
    expect(born.status).to.equal(400);
    expect(born.body.details.errors[0].path).to.equal('/holder/dateOfBirth');
  });

  it('refuses an id in the urn:uuid: form (Postgres cannot read it) with VALIDATION_ERROR, path or body', async () => {
    const { http } = await stack();
    const urn = `urn:uuid:${accountId}`;
    const read = await http.get(`/api/accounts/${urn}`).set(customer.auth);
    expect(read.status, JSON.stringify(read.body)).to.equal(400);
    expect(read.body.code).to.equal('VALIDATION_ERROR');
    expect(read.body.details.errors[0].path).to.equal('/params/accountId');
    const quoted = await http
      .post('/api/quotes')
      .set(customer.auth)
      .set(idem())
      .send({ accountId: urn, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '1.00' });
    expect(quoted.status, JSON.stringify(quoted.body)).to.equal(400);
    expect(quoted.body.code).to.equal('VALIDATION_ERROR');
    expect(quoted.body.details.errors[0].path).to.equal('/accountId');
    const transfer = await http
      .post('/api/operations/transfer')
      .set(customer.auth)
      .set(idem())
      .send({ sourceAccountId: accountId, targetAccountId: urn, amount: { value: '1.00', asset: 'BRL' } });
    expect(transfer.status, JSON.stringify(transfer.body)).to.equal(400);
    expect(transfer.body.details.errors[0].path).to.equal('/targetAccountId');
  });
});
