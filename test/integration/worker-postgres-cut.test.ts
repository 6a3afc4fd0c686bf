// A worker whose Postgres is cut (refused) or stalls (open, silent) in the middle of settling withdrawals and
// transfers: the PSP has taken the payouts, the worker has not recorded them, and the API accepts one more transfer
// into the outbox meanwhile. Once Postgres answers again every
// operation completes exactly once: one payout per withdrawal at the PSP, one settle posting each, balances exact and
// the ledger balanced (decisions 0051, 0228). The API that accepted them reaches Postgres directly; only the worker
// sits behind the proxy.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { systemEm } from '../../db/orm';
import { payoutIdFor } from '../../rails/pix/ids';
import { approvedInstruction } from '../helpers/beneficiary-fixtures';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, fund, getOp, quote, untilStatus } from '../helpers/money';
import { postgresDown } from '../helpers/outages';
import { ApiProc, killAll, spawnApi, spawnWorker } from '../helpers/processes';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { TcpProxy } from '../helpers/tcp-proxy';

const WITHDRAWALS = 3;
const TRANSFERS = 3;
// Longer than an activity's first retries, shorter than anything gives up on.
const OUTAGE_MS = 6_000;
// The PSP holds each payout's answer this long after taking it: the worker has sent it and not yet recorded it when
// Postgres goes.
const PSP_ANSWERS_AFTER_MS = 2_000;

const count = async (query: string, params: unknown[]) => {
  const { services } = await stack();
  return Number((await systemEm(services.orm).execute(query, params))[0].n);
};

describe('a worker whose Postgres goes away in the middle of settlements', function () {
  this.timeout(240_000);
  after(killAll);

  let api: ApiProc;
  let proxy: TcpProxy;
  const taskQueue = `cambio-worker-postgres-cut-${randomUUID()}`;

  before(async () => {
    const down = await postgresDown();
    proxy = down.proxy;
    await proxy.open();
    api = await spawnApi('api-worker-postgres-cut', taskQueue);
    await spawnWorker('worker-postgres-cut', taskQueue, {
      env: { DATABASE_URL: down.databaseUrl, DB_STATEMENT_TIMEOUT_MS: '2000' },
    });
  });

  after(async () => {
    proxy?.resume();
    await proxy?.cut();
  });

  /** Withdrawals of 10.00 and transfers of 5.00 out of an account funded with 100.00, through the API on our queue. */
  async function accept(c: TestCustomer) {
    const { psp } = await stack();
    const source = await activeAccount(c, ['BRL']);
    const target = await activeAccount(c, ['BRL']);
    await fund(c, source.id, 'BRL', '100.00');
    const key = `worker-cut-${randomUUID().slice(0, 8)}@example.com`;
    const { beneficiaryId, instructionId } = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: key });
    const fault = {
      method: 'PUT',
      pathPrefix: '/v3/gn/pix/',
      afterHandling: true,
      hangMs: PSP_ANSWERS_AFTER_MS,
      count: WITHDRAWALS,
    };
    expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
    const ids: { withdrawals: string[]; transfers: string[] } = { withdrawals: [], transfers: [] };
    const post = (path: string, body: object) => supertest(api.url).post(path).set(c.auth).set(idem()).send(body);
    // Quoted first, then all posted at once: the worker takes them together.
    const quotes = [];
    for (let i = 0; i < WITHDRAWALS; i++) {
      quotes.push(
        await quote(c, { accountId: source.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' }),
      );
    }
    const instruction = { type: 'REFERENCE', id: instructionId };
    const beneficiary = { type: 'REFERENCE', id: beneficiaryId, paymentInstruction: instruction };
    const transfer = {
      sourceAccountId: source.id,
      targetAccountId: target.id,
      amount: { value: '5.00', asset: 'BRL' },
    };
    const [withdrawals, transfers] = await Promise.all([
      Promise.all(
        quotes.map((q) => post('/api/operations/withdrawal', { accountId: source.id, quoteId: q.id, beneficiary })),
      ),
      Promise.all(Array.from({ length: TRANSFERS }, () => post('/api/operations/transfer', transfer))),
    ]);
    for (const res of [...withdrawals, ...transfers]) expect(res.status, JSON.stringify(res.body)).to.equal(201);
    ids.withdrawals = withdrawals.map((r) => r.body.id as string);
    ids.transfers = transfers.map((r) => r.body.id as string);
    // One more while the worker cannot reach Postgres: the API, which can, accepts it into the outbox.
    const acceptOneMore = async () => {
      const res = await post('/api/operations/transfer', transfer);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      ids.transfers.push(res.body.id);
    };
    return { source, target, ...ids, acceptOneMore };
  }

  async function expectSettledOnce(c: TestCustomer, accepted: Awaited<ReturnType<typeof accept>>) {
    const { psp } = await stack();
    for (const id of [...accepted.withdrawals, ...accepted.transfers]) await untilStatus(c, id, 'COMPLETED', 120_000);
    const payouts = Object.values(
      (await psp.control('GET', '/state')).body.payouts as Record<string, { idEnvio: string; status: string }>,
    );
    for (const id of accepted.withdrawals) {
      const atPsp = payouts.filter((p) => p.idEnvio === payoutIdFor(id));
      expect(atPsp, `one payout at the PSP for ${id}`).to.have.length(1);
      expect(await count('select count(*) as n from ledger_transactions where key = ?', [`${id}:settle`])).to.equal(1);
    }
    for (const id of [...accepted.withdrawals, ...accepted.transfers]) {
      expect(await count('select count(*) as n from events where dedupe_key = ?', [`${id}:COMPLETED`])).to.equal(1);
    }
    const [w, t] = [accepted.withdrawals.length, accepted.transfers.length];
    const left = (100 - w * 10 - t * 5).toFixed(2);
    expect(await balance(c, accepted.source.id, 'BRL')).to.deep.include({ total: left, held: '0.00' });
    expect(await balance(c, accepted.target.id, 'BRL')).to.deep.include({ total: (t * 5).toFixed(2) });
    await assertLedgerBalanced();
  }

  /** Some withdrawal is not settled yet as Postgres goes: the outage falls in the middle of the settlements. */
  async function expectUnsettled(c: TestCustomer, withdrawals: string[]) {
    const statuses = await Promise.all(withdrawals.map(async (id) => (await getOp(c, id)).currentState.status));
    expect(statuses, 'not all settled before the outage').to.include('PROCESSING');
  }

  /** Until the PSP holds a payout of `withdrawals`, whose answer it holds: the worker is in the middle of it. */
  async function untilPayoutSent(withdrawals: string[]) {
    const { psp } = await stack();
    const wanted = new Set(withdrawals.map(payoutIdFor));
    await eventually(
      async () =>
        Object.values((await psp.control('GET', '/state')).body.payouts as Record<string, { idEnvio: string }>).filter(
          (p) => wanted.has(p.idEnvio),
        ).length,
      (n) => n > 0,
      60_000,
      50,
    );
  }

  it('Postgres refused mid-settlement: each operation completes once when it is back', async () => {
    const c = await newCustomer('Worker Cut Ltda');
    const accepted = await accept(c);
    await untilPayoutSent(accepted.withdrawals);
    await proxy.cut();
    await expectUnsettled(c, accepted.withdrawals);
    await accepted.acceptOneMore();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await proxy.open();
    await expectSettledOnce(c, accepted);
  });

  it('Postgres stalled mid-settlement: each operation completes once when it answers again', async () => {
    const c = await newCustomer('Worker Stall Ltda');
    const accepted = await accept(c);
    await untilPayoutSent(accepted.withdrawals);
    proxy.stall();
    await expectUnsettled(c, accepted.withdrawals);
    await accepted.acceptOneMore();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    proxy.resume();
    await expectSettledOnce(c, accepted);
  });
});
