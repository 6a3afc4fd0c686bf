// A worker killed between the payout's PUT and its status read: the PSP took the payout, the worker never heard its
// answer. Restarted, the workflow sends the same idEnvio again (409 at the PSP, then its status read): exactly one
// payout leaves, the withdrawal completes once, and the money moves once.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm, tenantEm } from '../../db/orm';
import { createWithdrawal } from '../../services/operations/withdrawal';
import { payoutIdFor } from '../../rails/pix/ids';
import { approvedInstruction } from '../helpers/beneficiary-fixtures';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, fund, getOp, quote, untilStatus } from '../helpers/money';
import { kill, killAll, KILLED_WORKER_ENV, spawnWorker } from '../helpers/processes';
import { eventually, newCustomer, stack } from '../helpers/stack';

const count = async (query: string, params: unknown[]) => {
  const { services } = await stack();
  return Number((await systemEm(services.orm).execute(query, params))[0].n);
};

describe('a worker killed between the payout PUT and its status read', function () {
  // Two worker processes bundle their workflows, and the lost PUT is retried once its 30 s activity timeout ends.
  this.timeout(300000);
  after(killAll);

  it('after a restart: one payout at the PSP, the withdrawal COMPLETED once, balances exact', async () => {
    const { services, config, psp } = await stack();
    const taskQueue = `cambio-payout-kill-${randomUUID()}`;
    const ctx = { ...services, config: { ...config, taskQueue } };
    const c = await newCustomer('Payout Kill Ltda');
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '100.00');
    const key = `payout-kill-${randomUUID().slice(0, 8)}@example.com`;
    const { beneficiaryId, instructionId } = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: key });
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '25.00' });
    // Created before any worker serves its task queue: its start waits in the outbox.
    const op = await createWithdrawal(ctx, tenantEm(services.orm, c.customerId), {
      accountId: account.id,
      quoteId: q.id,
      beneficiary: {
        type: 'REFERENCE',
        id: beneficiaryId,
        paymentInstruction: { type: 'REFERENCE', id: instructionId },
      },
    });
    const idEnvio = payoutIdFor(op.id);
    const payouts = async () => {
      const state = (await psp.control('GET', '/state')).body;
      return Object.values(state.payouts as Record<string, { idEnvio: string; status: string }>).filter(
        (p) => p.idEnvio === idEnvio,
      );
    };
    // The PSP takes the PUT (the payout is stored), then its answer hangs: the worker dies waiting for it.
    const fault = { method: 'PUT', pathPrefix: `/v3/gn/pix/${idEnvio}`, afterHandling: true, hangMs: 120000, count: 1 };
    expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);

    const first = await spawnWorker('payout-worker-1', taskQueue, { env: KILLED_WORKER_ENV });
    await eventually(payouts, (p) => p.length === 1, 90000, 50);
    await kill(first);
    const meanwhile = await getOp(c, op.id);
    expect(meanwhile.currentState.status, 'the payout may have left: never FAILED').to.equal('PROCESSING');
    expect(await balance(c, account.id, 'BRL')).to.deep.include({ total: '100.00', held: '25.00' });

    await spawnWorker('payout-worker-2', taskQueue, { pollers: 0 });
    const done = await untilStatus(c, op.id, 'COMPLETED', 180000);
    const atPsp = await payouts();
    expect(atPsp, 'exactly one payout at the PSP').to.have.length(1);
    expect(atPsp[0].status).to.equal('REALIZADO');
    expect(done.transactions.filter((t: { direction: string }) => t.direction === 'DEBIT')).to.have.length(1);
    expect(await count('select count(*) as n from ledger_transactions where key = ?', [`${op.id}:settle`])).to.equal(1);
    expect(await count('select count(*) as n from events where dedupe_key = ?', [`${op.id}:COMPLETED`])).to.equal(1);
    expect(await balance(c, account.id, 'BRL')).to.deep.include({ total: '75.00', available: '75.00', held: '0.00' });
    await assertLedgerBalanced();
  });
});
