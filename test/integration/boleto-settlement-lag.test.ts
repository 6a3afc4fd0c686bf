// A boleto paid by its barcode reaches the bank's records through the compensation, a business day or more after the
// payer paid, and the bank dates it by the payer's day (`dataPagamento`). Reconciliation lists paid boletos by that
// date: a run whose window has moved on past the payer's day must still find the boleto whose notice was lost, or the
// money is at the bank with no record of it in Cambio (decision 0185).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { reconcileRail } from '../../payments/reconciliation';
import { activeAccount } from '../helpers/fixtures';
import { balance, quote, untilStatus } from '../helpers/money';
import { newCustomer, stack, type TestCustomer } from '../helpers/stack';

const HOUR_MS = 3_600_000;
const brasiliaDay = (d: Date) => new Date(d.getTime() - 3 * HOUR_MS).toISOString().slice(0, 10);

describe('BOLETO reconciliation: a payment the bank records days after the payer paid', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  before(async () => {
    c = await newCustomer('Boleto Compensation Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  after(async () => {
    // The runs below were dated on the next day: later runs of the suite start from the real clock again.
    const { services } = await stack();
    await systemEm(services.orm).execute(
      `delete from rail_reconciliations where rail = 'BOLETO' and window_end > now()`,
    );
  });

  it('a run past midnight still lists a boleto paid the day before, processed after its notice was lost', async () => {
    const { http, psp, services, config } = await stack();
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '80.00' });
    const res = await http
      .post('/api/operations/deposit')
      .set(c.auth)
      .set('X-Idempotency-Key', randomUUID())
      .send({ accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const { seuNumero } = res.body.intent.fundingInstruction;

    const settle = { orm: services.orm, temporal: services.temporal, config };
    const rail = services.rails!.connector('BOLETO')!.listing!;
    const run = (now: Date) =>
      reconcileRail(settle, { rail: 'BOLETO', listReceived: (w) => rail.listReceived(w) }, { now });
    // The payer pays today; the schedule runs through the night: at 00:30 tomorrow (Brasília) the bank shows nothing.
    const today = brasiliaDay(new Date());
    const tomorrowAt = (hour: number, minute: number) =>
      new Date(Date.parse(`${today}T00:00:00-03:00`) + 24 * HOUR_MS + hour * HOUR_MS + minute * 60_000);
    await run(tomorrowAt(0, 30));
    // The compensation: the bank records the payment in the morning, dated by the payer's day; its notice is lost.
    const paid = await psp.control('POST', '/boleto/pay', { seuNumero, notices: 0, dataPagamento: today });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    const codigo = paid.body.cobranca.codigoSolicitacao as string;

    const next = await run(tomorrowAt(8, 5));
    expect(next.late, JSON.stringify(next)).to.equal(1);
    const op = await untilStatus(c, res.body.id, 'COMPLETED');
    expect(op.transactions).to.have.length(1);
    expect(op.transactions[0]).to.deep.include({ direction: 'CREDIT', status: 'COMPLETED' });
    expect(op.transactions[0].amount.value).to.equal('80.00');
    const { body } = await http.get('/api/inbound-payments').set(c.auth);
    const recorded = body.data.filter((p: { endToEndId: string }) => p.endToEndId === codigo);
    expect(recorded.map((p: { status: string; operationId: string }) => [p.status, p.operationId])).to.deep.equal([
      ['MATCHED', res.body.id],
    ]);
    expect((await balance(c, accountId, 'BRL')).available).to.equal('80.00');
  });
});
