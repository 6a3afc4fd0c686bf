import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { issueStatements } from '../../statements/issue';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { getStatement, parseCsv, parseXml, type StatementBody } from '../helpers/statements';
import { camt053Errors, overlaps, pdfPages } from '../helpers/statement-documents';

// Statements that outside readers accept (../shared/spec/decisions.md; decision 0113): camt.053 valid against the
// official XSD (getStatement checks every camt.053 it fetches), a PDF people read, a CSV a spreadsheet cannot execute.

const HOLDER = 'Câmbio & Companhia São João <Ltda>';
const INJECTION = "-2+3+cmd|' /C calc'!A0";
const CONTROL = 'estorno\u0001 pedido\u0007 do cliente';

/** Sets the description of the statement entry's ledger transaction, as an operator's reason would read. */
async function setDescription(transactionId: string, description: string): Promise<void> {
  const em = systemEm((await stack()).services.orm);
  await em.execute('update ledger_transactions set description = ? where id = ?', [description, transactionId]);
}

const transfer = async (c: TestCustomer, from: string, to: string, value: string) => {
  const { http } = await stack();
  const res = await http
    .post('/api/operations/transfer')
    .set(c.auth)
    .set(idem())
    .send({ sourceAccountId: from, targetAccountId: to, amount: { value, asset: 'BRL' } });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  await untilStatus(c, res.body.id as string, 'COMPLETED');
};

describe('Statement formats', function () {
  this.timeout(600000);

  let c: TestCustomer;
  let a: string;
  let b: string;
  let periodStart: string;
  let periodEnd: string;
  let json: StatementBody;

  before(async () => {
    // The holder is the account's registered owner, not the API customer that holds the account for it.
    c = await newCustomer('Tesouraria Cliente da API');
    a = (await activeAccount(c, ['BRL', 'USD'], { legalName: HOLDER })).id;
    b = (await activeAccount(c, ['BRL'])).id;
    periodStart = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 22; i++) await fund(c, a, 'BRL', `${10 + i}.${String(i).padStart(2, '0')}`);
    await transfer(c, a, b, '5.00');
    await transfer(c, b, a, '1.25');
    const seeded = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd: new Date().toISOString() });
    // Once, in a loaded whole run, the body had no entries: the status and text say what it was next time.
    expect(seeded.status, seeded.text).to.equal(200);
    json = seeded.body as StatementBody;
    expect(json.entries).to.have.length(24);
    await setDescription(json.entries[0].id, '');
    await setDescription(json.entries[1].id, CONTROL);
    await setDescription(json.entries[2].id, INJECTION);
    await setDescription(json.entries[3].id, `Pagamento de João Gonçalves & Filhos <ação> ${'longo '.repeat(30)}`);
    periodEnd = new Date().toISOString();
    const edited = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd });
    expect(edited.status, edited.text).to.equal(200);
    json = edited.body as StatementBody;
  });

  it('camt.053 validates against the XSD: account id, references in order, codes, sequence, interim', async () => {
    const query = { asset: 'BRL', periodStart, periodEnd, format: 'camt053' };
    const first = await getStatement(c, a, query); // getStatement validates it against the schema
    expect(first.status, first.text).to.equal(200);
    const doc = parseXml(first.text).Document.BkToCstmrStmt;
    const stmt = doc.Stmt;
    expect(stmt.Acct.Id.Othr).to.deep.equal({ Id: a.replace(/-/g, ''), SchmeNm: { Prtry: 'CAMBIO' } });
    expect(stmt.Acct.Ownr.Nm).to.equal(HOLDER);
    expect(stmt.Bal.map((x: { Tp: { CdOrPrtry: { Cd: string } } }) => x.Tp.CdOrPrtry.Cd)).to.deep.equal([
      'OPBD',
      'CLBD',
    ]);
    // Not an issued statement: no electronic sequence number.
    expect(stmt).to.not.have.property('ElctrncSeqNb');
    expect(stmt.Ntry).to.have.length(json.entries.length);
    const codes = new Map<string, string>();
    stmt.Ntry.forEach((n: Record<string, any>, i: number) => {
      const e = json.entries[i];
      expect(n.NtryRef).to.equal(e.id.replace(/-/g, ''));
      expect(n.ValDt.DtTm).to.equal(e.bookedAt);
      expect(n.BkTxCd.Prtry).to.deep.equal({ Cd: e.operationType, Issr: 'CAMBIO' });
      const d = n.BkTxCd.Domn;
      codes.set(`${e.operationType}/${e.direction}`, `${d.Cd}/${d.Fmly.Cd}/${d.Fmly.SubFmlyCd}`);
      const refs = n.NtryDtls?.TxDtls?.Refs;
      if (e.endToEnd) expect(Object.keys(refs)).to.deep.equal(['EndToEndId', 'TxId']);
    });
    expect(Object.fromEntries(codes)).to.deep.equal({
      'DEPOSIT/CREDIT': 'PMNT/RCDT/OTHR',
      'TRANSFER/DEBIT': 'ACMT/ADOP/OTHR',
      'TRANSFER/CREDIT': 'ACMT/ACOP/OTHR',
    });
    expect(json.entries.some((e) => e.endToEnd)).to.equal(true);
    // The empty description is left out; the control characters are gone; markup characters and accents travel.
    expect(stmt.Ntry[0]).to.not.have.property('AddtlNtryInf');
    expect(stmt.Ntry[1].AddtlNtryInf).to.equal('estorno  pedido  do cliente');
    expect(stmt.Ntry[3].AddtlNtryInf).to.equal(
      `Pagamento de João Gonçalves & Filhos <ação> ${'longo '.repeat(30)}`.trim(),
    );

    // MsgId is unique per document; the closed period's statement is otherwise the same.
    const second = await getStatement(c, a, query);
    const msgId = (text: string) => parseXml(text).Document.BkToCstmrStmt.GrpHdr.MsgId as string;
    expect(msgId(second.text)).to.not.equal(msgId(first.text));
    expect(msgId(first.text)).to.match(/^[0-9a-f]{32}$/);
    expect(stmt.CreDtTm).to.equal(periodEnd);

    // A period not yet ended is interim: ITBD, created when rendered.
    const before = Date.now();
    const open = await getStatement(c, a, { ...query, periodEnd: new Date(Date.now() + 3600_000).toISOString() });
    expect(open.status).to.equal(200);
    const interim = parseXml(open.text).Document.BkToCstmrStmt.Stmt;
    expect(interim.Bal.map((x: { Tp: { CdOrPrtry: { Cd: string } } }) => x.Tp.CdOrPrtry.Cd)).to.deep.equal([
      'OPBD',
      'ITBD',
    ]);
    expect(Date.parse(interim.CreDtTm)).to.be.within(before - 1000, Date.now() + 1000);
  });

  it('the schema kept with the tests refuses what the old writer sent', async () => {
    const ok = (await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd, format: 'camt053' })).text;
    const broken = [
      ok.replace(`<Id>${a.replace(/-/g, '')}</Id>`, `<Id>${a}</Id>`),
      ok.replace(/<AddtlNtryInf>estorno {2}pedido/, '<AddtlNtryInf>estorno\u0001 pedido'),
      ok.replace(/<Ccy>BRL<\/Ccy>/, '<Ccy>USDC</Ccy>'),
      ok.replace(
        /<Refs><EndToEndId>([^<]*)<\/EndToEndId><TxId>([^<]*)<\/TxId>/,
        '<Refs><TxId>$2</TxId><EndToEndId>$1</EndToEndId>',
      ),
    ];
    for (const xml of broken) {
      expect(xml).to.not.equal(ok);
      expect(await camt053Errors(xml)).to.not.deep.equal([]);
    }
  });

  it('a stablecoin has no camt.053: 422 FORMAT_NOT_SUPPORTED naming json, csv and pdf, nothing else sent', async () => {
    const coin = (await activeAccount(c, ['USDC'])).id;
    const now = new Date().toISOString();
    const res = await getStatement(c, coin, { asset: 'USDC', periodStart, periodEnd: now, format: 'camt053' });
    expect(res.status).to.equal(422);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect(res.headers).to.not.have.property('x-statement-id');
    expect(res.headers).to.not.have.property('content-disposition');
    const body = res.body as { code: string; details: { supportedFormats: string[] } };
    expect(body.code).to.equal('FORMAT_NOT_SUPPORTED');
    expect(body.details.supportedFormats).to.deep.equal(['json', 'csv', 'pdf']);
    const byAccept = await getStatement(c, coin, { asset: 'USDC', periodStart, periodEnd: now }, 'application/xml');
    expect(byAccept.status).to.equal(422);
    for (const format of ['json', 'csv', 'pdf']) {
      expect((await getStatement(c, coin, { asset: 'USDC', periodStart, periodEnd: now, format })).status).to.equal(
        200,
      );
    }
  });

  it('keeps issued ElctrncSeqNb numbers when STATEMENT_INTERVAL grows; the longer period is next', async () => {
    const s = await stack();
    const em = systemEm(s.services.orm);
    const owner = await newCustomer('Sequência Mensal Ltda');
    const acct = (await activeAccount(owner, ['BRL'])).id;
    await fund(owner, acct, 'BRL', '2.00');
    const issue = (statementInterval: string) =>
      issueStatements(
        { orm: s.services.orm, config: { statementInterval, webhookTaskQueue: s.config.webhookTaskQueue } },
        new Date(),
      );
    const numbers = async () => {
      const rows = (await em.execute(
        `select id, extract(epoch from period_end) * 1000 as end_ms from statements
         where account_id = ? and asset = 'BRL' order by period_end, period_start`,
        [acct],
      )) as Array<{ id: string; end_ms: string }>;
      const seq: string[] = [];
      for (const row of rows) {
        const res = await s.http.get(`/api/statements/${row.id}`).query({ format: 'camt053' }).set(owner.auth);
        seq.push(parseXml(res.text).Document.BkToCstmrStmt.Stmt.ElctrncSeqNb);
      }
      return { seq, lastEnd: Number(rows[rows.length - 1].end_ms) };
    };
    // Periods of two seconds, then the interval grows to six (as `day` to `month`): the first six-second period
    // starts before the last two-second one ends.
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, 2100));
      await issue('PT2S');
    }
    const before = await numbers();
    let end = Math.ceil(before.lastEnd / 6000) * 6000;
    if (end === before.lastEnd) end += 6000;
    await new Promise((r) => setTimeout(r, Math.max(0, end - Date.now()) + 100));
    await issue('PT6S');
    const after = await numbers();
    expect(after.seq.length).to.equal(before.seq.length + 1);
    expect(after.seq, 'the numbers given stay; the new statement is the next').to.deep.equal([
      ...before.seq,
      String(before.seq.length + 1),
    ]);
  });

  it('issued statements carry consecutive ElctrncSeqNb per account and asset; a stablecoin one is 422', async () => {
    const s = await stack();
    const em = systemEm(s.services.orm);
    const owner = await newCustomer('Sequência Ltda');
    const acct = (await activeAccount(owner, ['BRL', 'USDC'])).id;
    await fund(owner, acct, 'BRL', '3.00');
    const deps = {
      orm: s.services.orm,
      config: { statementInterval: 'PT2S', webhookTaskQueue: s.config.webhookTaskQueue },
    };
    // Three periods of two seconds, each issued once it has closed.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 2100));
      await issueStatements(deps, new Date());
    }
    const rows = (await em.execute(
      `select id, to_char(period_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as period_start,
         to_char(period_end at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as period_end
       from statements where account_id = ? and asset = 'BRL' order by period_start`,
      [acct],
    )) as Array<{ id: string; period_start: string; period_end: string }>;
    expect(rows.length).to.be.at.least(3);
    const { http } = s;
    const numbers: string[] = [];
    for (const row of rows) {
      const res = await http.get(`/api/statements/${row.id}`).query({ format: 'camt053' }).set(owner.auth);
      expect(res.status).to.equal(200);
      expect(await camt053Errors(res.text)).to.deep.equal([]);
      const stmt = parseXml(res.text).Document.BkToCstmrStmt.Stmt;
      expect(stmt.Bal[1].Tp.CdOrPrtry.Cd).to.equal('CLBD');
      numbers.push(stmt.ElctrncSeqNb);
    }
    expect(numbers).to.deep.equal(rows.map((_, i) => String(i + 1)));
    // The same period on demand is the same statement: the same number.
    const last = rows[rows.length - 1];
    const onDemand = await getStatement(owner, acct, {
      asset: 'BRL',
      periodStart: last.period_start,
      periodEnd: last.period_end,
      format: 'camt053',
    });
    expect(parseXml(onDemand.text).Document.BkToCstmrStmt.Stmt.ElctrncSeqNb).to.equal(String(rows.length));

    const [coin] = (await em.execute(`select id from statements where account_id = ? and asset = 'USDC' limit 1`, [
      acct,
    ])) as Array<{ id: string }>;
    const refused = await http.get(`/api/statements/${coin.id}`).query({ format: 'camt053' }).set(owner.auth);
    expect(refused.status).to.equal(422);
    expect(refused.body.code).to.equal('FORMAT_NOT_SUPPORTED');
    expect((await http.get(`/api/statements/${coin.id}`).query({ format: 'pdf' }).set(owner.auth)).status).to.equal(
      200,
    );
  });

  it('PDF: summary on page one; headings, account, page N of M on every page; every entry; no overlap', async () => {
    const res = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd }, 'application/pdf');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/pdf');
    const pages = await pdfPages(res.bytes);
    expect(pages.length).to.be.at.least(2);
    const first = pages[0].lines.join('\n');
    for (const text of [
      `Account holder: ${HOLDER}`,
      `Account: ${a}`,
      'Asset: BRL',
      `Opening balance: ${json.openingBalance.value} BRL`,
      `Closing balance: ${json.closingBalance.value} BRL`,
      `Credits: ${json.credits.count} totalling ${json.credits.sum.value} BRL`,
      `Debits: ${json.debits.count} totalling ${json.debits.sum.value} BRL`,
    ]) {
      expect(first).to.include(text);
    }
    expect(first).to.match(/Period: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    pages.forEach((page, i) => {
      const text = page.lines.join('\n');
      expect(text, `page ${i + 1}`).to.include('Date (UTC) Description End-to-end reference Amount Balance after');
      expect(text, `page ${i + 1}`).to.include(`Account ${a} · BRL`);
      expect(text, `page ${i + 1}`).to.include(`Page ${i + 1} of ${pages.length}`);
      expect(overlaps(page), `page ${i + 1}`).to.deep.equal([]);
    });
    // Every entry: its date and time, its description (as far as it fits), signed amount, balance after, reference.
    const lines = pages.flatMap((p) => p.lines);
    for (const e of json.entries) {
      const sign = e.direction === 'CREDIT' ? '+' : '-';
      const row = lines.findIndex(
        (l) =>
          l.startsWith(`${e.bookedAt.slice(0, 10)} `) &&
          l.endsWith(` ${sign}${e.amount.value} ${e.balanceAfter.value}`),
      );
      expect(row, `entry ${e.id}`).to.be.at.least(0);
      expect(lines[row + 1].startsWith(e.bookedAt.slice(11, 19)), `entry ${e.id}`).to.equal(true);
      if (e.endToEnd) expect(`${lines[row]} ${lines[row + 1]}`.replace(/ /g, '')).to.include(e.endToEnd.slice(0, 20));
    }
    expect(lines.some((l) => l.includes('Pagamento de João Gonçalves'))).to.equal(true);
    expect(lines.some((l) => l.includes(INJECTION))).to.equal(true);
  });

  it('CSV: free text starting with a formula character is neutralised; amounts stay numbers; headers', async () => {
    const csv = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd, format: 'csv' });
    const [header, ...rows] = parseCsv(csv.text);
    const description = header.indexOf('description');
    expect(rows[2][description]).to.equal(`'${INJECTION}`);
    expect(rows[0][description]).to.equal('');
    const debit = rows.find((r) => r[header.indexOf('direction')] === 'DEBIT')!;
    expect(debit[header.indexOf('amount')]).to.match(/^\d+\.\d\d$/);
    for (const r of rows) expect(r[header.indexOf('balanceAfter')]).to.match(/^\d+\.\d\d$/);

    const { http } = await stack();
    const paths = (await http.get('/openapi.json')).body.paths;
    for (const path of ['/api/accounts/{accountId}/statement', '/api/statements/{statementId}']) {
      const ok = paths[path].get.responses['200'];
      for (const name of [
        'X-Statement-Id',
        'X-Statement-Opening-Balance',
        'X-Statement-Closing-Balance',
        'Content-Disposition',
      ]) {
        expect(ok.headers, `${path} ${name}`).to.have.property(name);
        expect(ok.headers[name].description).to.be.a('string');
      }
      expect(paths[path].get.responses['422'].description).to.include('FORMAT_NOT_SUPPORTED');
    }
    for (const name of ['x-statement-id', 'x-statement-opening-balance', 'x-statement-closing-balance']) {
      expect(csv.headers).to.have.property(name);
    }
    expect(csv.headers['content-disposition']).to.match(/^attachment; filename="statement-BRL-.*\.csv"$/);
  });
});
