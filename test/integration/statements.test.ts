import { expect } from 'chai';
import fc from 'fast-check';
import { Client as PgClient } from 'pg';
import { systemEm } from '../../db/orm';
import { Dec } from '../../domain/money';
import { activeAccount } from '../helpers/fixtures';
import { approvedInstruction } from '../helpers/beneficiary-fixtures';
import { fund, quote, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { getStatement, parseCsv, parseXml, type StatementBody } from '../helpers/statements';
import { pdfPages } from '../helpers/statement-documents';
import { cambio, cambioFails } from '../helpers/cli';

type Action =
  | { kind: 'deposit'; cents: number }
  | { kind: 'withdraw'; cents: number; fails: boolean }
  | { kind: 'swap'; cents: number }
  | { kind: 'transfer'; cents: number; back: boolean };

const money = (cents: number) => new Dec(cents).div(100).toFixed(2);

const post = async (c: TestCustomer, kind: string, body: Record<string, unknown>) => {
  const res = await (await stack()).http.post(`/api/operations/${kind}`).set(c.auth).set(idem()).send(body);
  if (res.status !== 201) throw new Error(`${kind} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
};

/** What the ledger holds for an account, straight from its entries (not from the history columns under test). */
async function entriesOf(accountId: string) {
  const em = systemEm((await stack()).services.orm);
  return (await em.execute(
    `select asset, amount::text as amount,
       to_char(booked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
     from ledger_entries where account_id = ? order by booked_at, balance_seq`,
    [accountId],
  )) as Array<{ asset: string; amount: string; at: string }>;
}

const totalAsOf = async (c: TestCustomer, accountId: string, asset: string, asOf: string) => {
  const res = await (await stack()).http.get(`/api/accounts/${accountId}/balances`).query({ asOf }).set(c.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body.balances.find((b: { asset: string }) => b.asset === asset)?.total.value ?? '0') as string;
};

/** Micro-second instants strictly between two ISO instants with 6 digits (both of the database's form). */
const micros = (iso: string) => BigInt(Date.parse(iso.slice(0, 23) + 'Z')) * 1000n + BigInt(iso.slice(23, 26));
const fromMicros = (m: bigint) =>
  new Date(Number(m / 1000n)).toISOString().replace('Z', `${(m % 1000n).toString().padStart(3, '0')}Z`);

describe('Statements', function () {
  this.timeout(600000);

  let c: TestCustomer;
  let a: string;
  let b: string;
  let beneficiary: { ok: { beneficiaryId: string; instructionId: string }; fails: typeof beneficiary.ok };

  before(async () => {
    c = await newCustomer('Statements Ltda');
    a = (await activeAccount(c, ['BRL', 'USD'])).id;
    b = (await activeAccount(c, ['BRL'])).id;
    beneficiary = {
      ok: await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: 'maria@example.com' }),
      fails: await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: 'payout-fails@example.com' }),
    };
    await fund(c, a, 'BRL', '500.00');
  });

  async function run(action: Action, available: { a: number; b: number }) {
    switch (action.kind) {
      case 'deposit':
        await fund(c, a, 'BRL', money(action.cents));
        available.a += action.cents;
        return;
      case 'withdraw': {
        if (action.cents > available.a) return;
        const q = await quote(c, {
          accountId: a,
          sourceAsset: 'BRL',
          targetAsset: 'BRL',
          sourceAmount: money(action.cents),
        });
        const to = action.fails ? beneficiary.fails : beneficiary.ok;
        const op = await post(c, 'withdrawal', {
          accountId: a,
          quoteId: q.id,
          beneficiary: {
            type: 'REFERENCE',
            id: to.beneficiaryId,
            paymentInstruction: { type: 'REFERENCE', id: to.instructionId },
          },
        });
        await untilStatus(c, op.id, action.fails ? 'FAILED' : 'COMPLETED');
        if (!action.fails) available.a -= action.cents;
        return;
      }
      case 'swap': {
        if (action.cents > available.a) return;
        const q = await quote(c, {
          accountId: a,
          sourceAsset: 'BRL',
          targetAsset: 'USD',
          sourceAmount: money(action.cents),
        });
        await untilStatus(c, (await post(c, 'swap', { accountId: a, quoteId: q.id })).id, 'COMPLETED');
        available.a -= action.cents;
        return;
      }
      case 'transfer': {
        const [from, to] = action.back ? [b, a] : [a, b];
        const have = action.back ? available.b : available.a;
        if (action.cents > have) return;
        const op = await post(c, 'transfer', {
          sourceAccountId: from,
          targetAccountId: to,
          amount: { value: money(action.cents), asset: 'BRL' },
        });
        await untilStatus(c, op.id, 'COMPLETED');
        available.a += action.back ? action.cents : -action.cents;
        available.b += action.back ? -action.cents : action.cents;
      }
    }
  }

  const cents = fc.integer({ min: 1, max: 9999 });
  // A swap of a few cents of BRL buys no USD cent: 400 INVALID_AMOUNT, not a posting (1.00 BRL buys about 0.19 USD).
  const swapCents = fc.integer({ min: 100, max: 9999 });
  const action: fc.Arbitrary<Action> = fc.oneof(
    fc.record({ kind: fc.constant('deposit' as const), cents }),
    fc.record({ kind: fc.constant('withdraw' as const), cents, fails: fc.boolean() }),
    fc.record({ kind: fc.constant('swap' as const), cents: swapCents }),
    fc.record({ kind: fc.constant('transfer' as const), cents, back: fc.boolean() }),
  );

  it('asOf is the sum of the postings before it; statements chain, close to the cent, and never skip', async () => {
    const available = { a: 50000, b: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 2, maxLength: 5 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }),
        async (actions, cuts) => {
          const start = new Date().toISOString();
          for (const x of actions) await run(x, available);
          const end = new Date().toISOString();
          const entries = await entriesOf(a);

          // asOf at each posting's own instant (strictly before it), just after it, and at the window's edges.
          const instants = [start, end, ...entries.slice(-8).flatMap((e) => [e.at, fromMicros(micros(e.at) + 1n)])];
          for (const at of instants) {
            const sum = entries
              .filter(
                (e) => e.asset === 'BRL' && micros(e.at) < micros(at.length === 27 ? at : at.replace('Z', '000Z')),
              )
              .reduce((s, e) => s.plus(e.amount), new Dec(0));
            expect(await totalAsOf(c, a, 'BRL', at), `asOf ${at}`).to.equal(sum.toFixed(2));
          }

          // Consecutive periods of random lengths over the window chain and each closes on its own entries.
          const s0 = Date.parse(start);
          const span = Date.parse(end) - s0 + 1;
          const bounds = [s0, ...cuts.map((x) => s0 + Math.floor(x * span)).sort((p, q) => p - q), s0 + span];
          const edges = [...new Set(bounds)].map((ms) => new Date(ms).toISOString());
          let previous: StatementBody | undefined;
          for (let i = 0; i + 1 < edges.length; i++) {
            const res = await getStatement(c, a, { asset: 'BRL', periodStart: edges[i], periodEnd: edges[i + 1] });
            expect(res.status, res.text).to.equal(200);
            const st = res.body as StatementBody;
            expect(st.openingBalance.value).to.equal(await totalAsOf(c, a, 'BRL', edges[i]));
            if (previous) expect(st.openingBalance.value).to.equal(previous.closingBalance.value);
            let running = new Dec(st.openingBalance.value);
            for (const e of st.entries) {
              running = e.direction === 'CREDIT' ? running.plus(e.amount.value) : running.minus(e.amount.value);
              expect(e.balanceAfter.value, `entry ${e.id}`).to.equal(running.toFixed(2));
            }
            const credits = st.entries.filter((e) => e.direction === 'CREDIT');
            const debits = st.entries.filter((e) => e.direction === 'DEBIT');
            expect(st.credits.count).to.equal(credits.length);
            expect(st.debits.count).to.equal(debits.length);
            expect(
              new Dec(st.openingBalance.value).plus(st.credits.sum.value).minus(st.debits.sum.value).toFixed(2),
            ).to.equal(st.closingBalance.value);
            expect(st.closingBalance.value).to.equal(running.toFixed(2));
            previous = st;
          }
        },
      ),
      { numRuns: 3, endOnFailure: true },
    );
  });

  it('CSV, camt.053 and PDF carry the same statement as JSON', async () => {
    const periodStart = new Date(Date.now() - 3600_000).toISOString();
    await fund(c, a, 'BRL', '12.34');
    const periodEnd = new Date().toISOString();
    const query = { asset: 'BRL', periodStart, periodEnd };
    const json = (await getStatement(c, a, query)).body as StatementBody;
    expect(json.entries.length).to.be.greaterThan(0);

    const csv = await getStatement(c, a, query, 'text/csv');
    expect(csv.status).to.equal(200);
    expect(csv.headers['content-type']).to.match(/^text\/csv/);
    expect(csv.headers['x-statement-opening-balance']).to.equal(json.openingBalance.value);
    expect(csv.headers['x-statement-closing-balance']).to.equal(json.closingBalance.value);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).to.deep.equal(
      'id,bookedAt,operationId,operationType,direction,amount,asset,balanceAfter,description,endToEnd'.split(','),
    );
    expect(rows.map((r) => [r[0], r[1], r[4], r[5], r[7]])).to.deep.equal(
      json.entries.map((e) => [e.id, e.bookedAt, e.direction, e.amount.value, e.balanceAfter.value]),
    );

    const xml = await getStatement(c, a, { ...query, format: 'camt053' });
    expect(xml.headers['content-type']).to.match(/^application\/xml/);
    const doc = parseXml(xml.text).Document;
    expect(doc['@_xmlns']).to.equal('urn:iso:std:iso:20022:tech:xsd:camt.053.001.08');
    const stmt = doc.BkToCstmrStmt.Stmt;
    const bal = (code: string) =>
      stmt.Bal.find((x: { Tp: { CdOrPrtry: { Cd: string } } }) => x.Tp.CdOrPrtry.Cd === code);
    expect(bal('OPBD').Amt['#text']).to.equal(json.openingBalance.value);
    expect(bal('CLBD').Amt['#text']).to.equal(json.closingBalance.value);
    expect(bal('CLBD').Amt['@_Ccy']).to.equal('BRL');
    expect(stmt.Ntry).to.have.length(json.entries.length);
    stmt.Ntry.forEach((n: Record<string, any>, i: number) => {
      const e = json.entries[i];
      expect(n.Amt['#text']).to.equal(e.amount.value);
      expect(n.CdtDbtInd).to.equal(e.direction === 'CREDIT' ? 'CRDT' : 'DBIT');
      expect(n.AcctSvcrRef).to.equal(e.id.replace(/-/g, ''));
      expect(n.BookgDt.DtTm).to.equal(e.bookedAt);
    });

    const pdf = await getStatement(c, a, query, 'application/pdf');
    expect(pdf.headers['content-type']).to.equal('application/pdf');
    expect(pdf.bytes.subarray(0, 5).toString()).to.equal('%PDF-');
    const text = (await pdfPages(pdf.bytes)).flatMap((p) => p.lines).join('\n');
    expect(text).to.include(`Opening balance: ${json.openingBalance.value} BRL`);
    expect(text).to.include(`Closing balance: ${json.closingBalance.value} BRL`);

    // /openapi.json names every representation the route sends: a client generated from it accepts each.
    const { http } = await stack();
    const documented = (await http.get('/openapi.json')).body.paths['/api/accounts/{accountId}/statement'].get
      .responses['200'].content;
    for (const sent of [csv, xml, pdf]) expect(documented).to.have.property(sent.headers['content-type'].split(';')[0]);
  });

  it('a bad period is 400 INVALID_PERIOD, a bad bound 400 VALIDATION_ERROR, another customer 404', async () => {
    const now = new Date().toISOString();
    const same = await getStatement(c, a, { asset: 'BRL', periodStart: now, periodEnd: now });
    expect(same.status).to.equal(400);
    expect((same.body as { code: string }).code).to.equal('INVALID_PERIOD');
    const bad = await getStatement(c, a, { asset: 'BRL', periodStart: 'yesterday', periodEnd: now });
    expect(bad.status).to.equal(400);
    expect((bad.body as { code: string }).code).to.equal('VALIDATION_ERROR');
    const other = await newCustomer('Other Ltda');
    const periodStart = new Date(Date.now() - 60_000).toISOString();
    const foreign = await getStatement(other, a, { asset: 'BRL', periodStart, periodEnd: now });
    expect(foreign.status).to.equal(404);
  });

  it('an asset the account never held is the zero statement; an Accept it cannot serve gets JSON', async () => {
    const periodStart = new Date(Date.now() - 3600_000).toISOString();
    await fund(c, a, 'BRL', '1.00');
    const periodEnd = new Date().toISOString();
    // `a` holds BRL and USD only (decision 0101).
    const eur = await getStatement(c, a, { asset: 'EUR', periodStart, periodEnd });
    expect(eur.status).to.equal(200);
    const zero = eur.body as StatementBody;
    expect([zero.openingBalance.value, zero.closingBalance.value, zero.entries.length]).to.deep.equal([
      '0.00',
      '0.00',
      0,
    ]);
    const png = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd }, 'image/png');
    expect(png.status).to.equal(200);
    expect(png.headers['content-type']).to.match(/^application\/json/);
    expect((png.body as StatementBody).entries.length).to.be.greaterThan(0);
  });

  it('a database that fails on the first page of entries is 503 with Retry-After, not a dropped socket', async () => {
    const { http, config } = await stack();
    const c = await newCustomer('Pagina Bloqueada Ltda');
    const account = (await activeAccount(c, ['BRL'])).id;
    await fund(c, account, 'BRL', '10.00');
    // The statement's header (account, balances) reads other tables; its pages join ledger_transactions, held here
    // past the lock timeout as a migration or a stalled session would hold it (decision 0247).
    const locker = new PgClient({ connectionString: config.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table ledger_transactions in access exclusive mode');
      for (const format of ['json', 'csv']) {
        const res = await http
          .get(`/api/accounts/${account}/statement`)
          .query({ asset: 'BRL', periodStart: '2020-01-01T00:00:00Z', periodEnd: '2100-01-01T00:00:00Z', format })
          .set(c.auth)
          .catch((err: Error) => ({ status: 0, body: { code: err.message }, headers: {} as Record<string, string> }));
        expect(res.status, `${format}: ${JSON.stringify(res.body)}`).to.equal(503);
        expect(res.body.code).to.equal('SERVICE_UNAVAILABLE');
        expect(Number(res.headers['retry-after'])).to.be.at.least(1);
      }
    } finally {
      await locker.query('rollback').catch(() => undefined);
      await locker.end();
    }
    const after = await getStatement(c, account, {
      asset: 'BRL',
      periodStart: '2020-01-01T00:00:00Z',
      periodEnd: '2100-01-01T00:00:00Z',
    });
    expect((after.body as StatementBody).entries.length).to.equal(1);
  });

  it('cambio statement prints what the API answers, in JSON and CSV; an unknown account or asset fails', async () => {
    const periodStart = new Date(Date.now() - 3600_000).toISOString();
    const periodEnd = new Date().toISOString();
    const query = { asset: 'BRL', periodStart, periodEnd };
    const args = ['statement', a, '--asset', 'brl', '--from', periodStart, '--to', periodEnd];
    const json = await getStatement(c, a, query);
    expect((json.body as StatementBody).entries.length).to.be.greaterThan(0);
    expect((await cambio(...args)).stdout).to.equal(json.text);
    const csv = await getStatement(c, a, { ...query, format: 'csv' });
    expect((await cambio(...args, '--format', 'csv')).stdout).to.equal(csv.text);
    const unknown = await cambioFails('statement', '00000000-0000-4000-8000-000000000000', ...args.slice(2));
    expect(unknown.exitCode).to.not.equal(0);
    expect(unknown.body.code).to.equal('NOT_FOUND');
    // An asset Cambio does not know is the caller's mistake, named, as the API's 400 names it.
    const badAsset = await cambioFails('statement', a, '--asset', 'XYZ', '--from', periodStart, '--to', periodEnd);
    expect([badAsset.body.code, badAsset.body.details?.errors?.[0]?.path]).to.deep.equal([
      'VALIDATION_ERROR',
      '--asset',
    ]);
  });
});
