// A payout whose outcome is unknown is visible to operators as a metric (decision 0120): a withdrawal the simulated
// PSP keeps pending is counted by `cambio_payouts_stuck{rail}` once it has been PROCESSING for longer than
// STUCK_PAYOUT_AFTER_SECONDS, and no longer once the PSP settles it; a return the PSP keeps pending likewise by
// `cambio_returns_stuck{rail}`. A database that does not answer leaves the gauges out; /metrics still answers.
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from '../../api/app';
import { returnPayment } from '../../services/inbound-payment-resolution';
import { findPaymentByReference } from '../../db/repositories/inbound-payments';
import { ormConfig, systemEm } from '../../db/orm';
import { payoutIdFor } from '../../rails/pix/ids';
import { withdrawToNewKey } from '../helpers/beneficiary-fixtures';
import { cambioWith } from '../helpers/cli';
import { activeAccount } from '../helpers/fixtures';
import { fund, getOp, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack } from '../helpers/stack';

/** The value of `name{labels}` in Prometheus text, or undefined when the scrape has no such sample. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}} `;
  const line = text.split('\n').find((l) => l.startsWith(wanted));
  return line === undefined ? undefined : Number(line.slice(wanted.length));
}

/** An API app of the stack whose stuck threshold is `seconds`, and a scrape of its /metrics. */
async function scraper(seconds: number, orm?: MikroORM): Promise<() => Promise<string>> {
  const { services } = await stack();
  const http = supertest(
    createApp({
      ...services,
      orm: orm ?? services.orm,
      config: { ...services.config, stuckPayoutAfterSeconds: seconds },
    }).callback(),
  );
  return async () => {
    const res = await http.get('/metrics');
    expect(res.status).to.equal(200);
    return res.text;
  };
}

describe('stuck payouts and returns on /metrics', function () {
  this.timeout(120000);
  const PIX = { rail: 'PIX_KEY' };

  it('a withdrawal the PSP keeps pending is counted once past the threshold, and not once it completes', async () => {
    const { psp } = await stack();
    const c = await newCustomer('Stuck Metric Ltda');
    const accountId = (await activeAccount(c, ['BRL'] as never)).id;
    await fund(c, accountId, 'BRL', '100.00');
    // Other files may have left withdrawals pending: this one is counted on top of whatever was there.
    const scrapeSoon = await scraper(1);
    const scrapeLate = await scraper(3600);
    const stuck = (text: string) => sample(text, 'cambio_payouts_stuck', PIX);
    const baseline = stuck(await scrapeSoon());
    const baselineLate = stuck(await scrapeLate());
    expect(baseline, 'a series for PIX even with nothing stuck').to.be.a('number');

    const key = `stuck-metric-${randomUUID()}@example.com`;
    await psp.control('POST', '/payout-rules', { chave: key, status: 'EM_PROCESSAMENTO' });
    const res = await withdrawToNewKey(c, accountId, key, '10.00');
    expect(res.status).to.equal(201);
    const id: string = res.body.id;
    await eventually(
      async () => Object.values((await psp.control('GET', '/state')).body.payouts as Record<string, any>),
      (payouts) => payouts.some((p) => p.idEnvio === payoutIdFor(id)),
      20000,
    );
    expect((await getOp(c, id)).currentState.status).to.equal('PROCESSING');

    const text = await eventually(scrapeSoon, (t) => stuck(t) === baseline! + 1, 15000, 200);
    expect(sample(text, 'cambio_payouts_stuck_oldest_age_seconds', PIX)).to.be.at.least(1);
    expect(text, 'no customer or operation in a label').not.to.contain(c.customerId).and.not.to.contain(id);
    // Younger than an hour: not stuck for a deployment whose threshold is an hour.
    expect(stuck(await scrapeLate())).to.equal(baselineLate);
    // Without --older-than the operators' list takes the same threshold as the gauge.
    const listed = async (seconds: string) =>
      (
        JSON.parse(
          (await cambioWith({ STUCK_PAYOUT_AFTER_SECONDS: seconds }, 'operation', 'list', '--stuck', '--json')).stdout,
        ) as {
          id: string;
        }[]
      ).map((op) => op.id);
    expect(await listed('1')).to.include(id);
    expect(await listed('3600')).to.not.include(id);

    expect((await psp.control('POST', `/payouts/${payoutIdFor(id)}/settle`, { status: 'REALIZADO' })).status).to.equal(
      204,
    );
    await untilStatus(c, id, 'COMPLETED', 90000);
    expect(stuck(await scrapeSoon())).to.equal(baseline);
  });

  it('a return the PSP keeps pending is counted once past the threshold, and not once it is returned', async () => {
    const { psp, config, services } = await stack();
    const scrape = await scraper(1);
    const stuck = (text: string) => sample(text, 'cambio_returns_stuck', PIX);
    const baseline = stuck(await scrape());
    expect(baseline).to.be.a('number');
    // Money paid to the receiving key with no charge: UNMATCHED, for an operator to send back.
    const paid = await psp.control('POST', '/pix', { valor: '8.00', chave: config.pix.receivingKey });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(201);
    const e2e: string = paid.body.endToEndId;
    const record = () => findPaymentByReference(systemEm(services.orm), 'PIX_KEY', e2e);
    const payment = (await eventually(record, (p) => p?.status === 'UNMATCHED', 30000, 100))!;
    await psp.control('POST', '/return-rules', { endToEndId: e2e, status: 'EM_PROCESSAMENTO' });
    expect(await returnPayment(services, payment.id, 'sent back')).to.deep.include({ status: 'RETURNING' });

    const text = await eventually(scrape, (t) => stuck(t) === baseline! + 1, 15000, 200);
    expect(sample(text, 'cambio_returns_stuck_oldest_age_seconds', PIX)).to.be.at.least(1);

    const returnId = (await record())!.returnId!;
    const settle = await psp.control('POST', `/pix/${e2e}/devolucao/${returnId}/settle`, { status: 'DEVOLVIDO' });
    expect(settle.status).to.equal(204);
    await eventually(record, (p) => p?.status === 'RETURNED', 60000, 200);
    expect(stuck(await scrape())).to.equal(baseline);
  });

  it('a database that does not answer leaves the stuck gauges out, and /metrics still answers', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const deadOrm = await MikroORM.init({
      ...ormConfig(`postgres://postgres@127.0.0.1:${port}/cambio`),
      connect: false,
    });
    try {
      const started = Date.now();
      const text = await (await scraper(1, deadOrm))();
      expect(Date.now() - started, 'a bounded scrape').to.be.below(10000);
      expect(text).to.contain('# TYPE cambio_payouts_stuck gauge');
      expect(text).to.contain('process_cpu_user_seconds_total');
      expect(sample(text, 'cambio_payouts_stuck', PIX)).to.equal(undefined);
      expect(sample(text, 'cambio_payouts_stuck_oldest_age_seconds', PIX)).to.equal(undefined);
      expect(sample(text, 'cambio_returns_stuck', PIX)).to.equal(undefined);
    } finally {
      await deadOrm.close(true);
    }
  });
});
