// PIX deposits under a crash: 2 API and 2 worker processes on their own task queue; clients create deposits through
// either API (retrying a failure with the SAME key on the other) and pay each charge at the run's simulated PSP,
// whose notices are recorded and signalled while one API and one worker are SIGKILLed mid-load (the worker comes
// back). Every deposit answered 201 completes exactly once: one MATCHED payment, one credit, the balance to the cent.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Decimal from 'decimal.js';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { balance, quote } from '../helpers/money';
import { ApiProc, kill, killAll, spawnApi, spawnWorker } from '../helpers/processes';
import { eventually, newCustomer, stack } from '../helpers/stack';

const CLIENTS = 4;
const DEPOSITS_PER_CLIENT = 6;
const VALUE = '12.34';

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

describe('PIX deposits with an API and a worker SIGKILLed mid-load', function () {
  this.timeout(115000);
  after(killAll);

  it('completes each deposit answered 201 once: one payment matched, one credit, balances to the cent', async () => {
    const taskQueue = `cambio-deposit-kill-${randomUUID()}`;
    const [api1, api2] = await Promise.all([spawnApi('api-1', taskQueue), spawnApi('api-2', taskQueue)]);
    const worker1 = await spawnWorker('worker-1', taskQueue);
    await spawnWorker('worker-2', taskQueue, { pollers: 2 });
    const c = await newCustomer('Deposit Crash Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    const { psp } = await stack();

    const apis: ApiProc[] = [api1, api2];
    let created = 0;
    let paid = 0;
    /** The deposit's POST with one key, on the preferred API, then the other, until an answer that is final. */
    const createDeposit = async (body: Record<string, unknown>, key: string, preferred: number) => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const api = apis[(preferred + attempt) % 2];
        const res = await fetch(`${api.url}/api/operations/deposit`, {
          method: 'POST',
          headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10000),
        }).catch(() => undefined);
        const answer = res && { status: res.status, body: (await res.json()) as any };
        if (answer && answer.status < 500 && !(answer.status === 409 && answer.body.code === 'IDEMPOTENCY_KEY_IN_USE'))
          return answer;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`deposit with key ${key} got no final answer`);
    };

    const deposits: { key: string; id: string }[] = [];
    const load = Promise.all(
      Array.from({ length: CLIENTS }, async (_, n) => {
        for (let i = 0; i < DEPOSITS_PER_CLIENT; i++) {
          const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: VALUE });
          const key = randomUUID();
          const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } };
          const answer = await createDeposit(body, key, (n + i) % 2);
          expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
          created++;
          deposits.push({ key, id: answer.body.id });
          const pay = await psp.control('POST', '/pix', { txid: answer.body.intent.fundingInstruction.txid });
          expect(pay.status, JSON.stringify(pay.body)).to.be.oneOf([201, 202]);
          paid++;
        }
      }),
    );
    load.catch(() => undefined);

    // Mid-load: one API and one worker die without warning; the worker comes back (a supervisor would restart it).
    const total = CLIENTS * DEPOSITS_PER_CLIENT;
    await eventually(
      async () => paid,
      (n) => n >= total / 3,
      60000,
      10,
    );
    expect(created, 'the kill landed mid-load').to.be.below(total);
    await Promise.all([kill(api1), kill(worker1)]);
    await spawnWorker('worker-1-restarted', taskQueue, { pollers: 0 });
    await load;

    const ids = deposits.map((d) => d.id);
    expect(new Set(ids).size, 'one deposit per key').to.equal(total);
    const ops = await eventually(
      () => sql<{ id: string; status: string }>(`select id, status from operations where account_id = ?`, [accountId]),
      (rows) => rows.length === total && rows.every((r) => r.status === 'COMPLETED'),
      60000,
      250,
    );
    expect(ops.map((o) => o.id).sort(), 'the deposits are exactly those answered 201').to.deep.equal([...ids].sort());
    // One payment per deposit, MATCHED for its whole amount; one credit (ledger transaction) per deposit.
    const payments = await sql<{ operation_id: string; status: string; amount: string }>(
      `select operation_id, status, amount::numeric(20, 2)::text as amount from inbound_payments
       where operation_id in (?)`,
      [ids],
    );
    expect(payments).to.have.length(total);
    expect(payments.every((p) => p.status === 'MATCHED' && p.amount === VALUE)).to.equal(true);
    const credits = await sql<{ operation_id: string; n: number }>(
      `select operation_id, count(*)::int as n from ledger_transactions where operation_id in (?) group by 1`,
      [ids],
    );
    expect(credits.map((r) => r.n)).to.deep.equal(ids.map(() => 1));
    expect(await balance(c, accountId, 'BRL')).to.deep.include({
      available: new Decimal(VALUE).times(total).toFixed(2),
      held: '0.00',
    });
    // The root hook then checks the whole ledger: entries balance per asset and match the running balances.
  });
});
