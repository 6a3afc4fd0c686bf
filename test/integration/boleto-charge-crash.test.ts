// A BOLETO deposit's boleto is registered at the bank before the request's transaction (decision 0078): an API that
// dies between the two, or a 503 that is never retried, must not leave the boleto payable in the owner's name
// (decision 0243). Real processes: the API that dies is a child process killed at its own crash point.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { quote } from '../helpers/money';
import { exitWithin, killAll, spawnApi } from '../helpers/processes';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

/** The boletos the simulated bank holds for `valorNominal`, by seuNumero. */
async function boletosOf(value: string): Promise<string[]> {
  const { psp } = await stack();
  const state = (await psp.control('GET', '/boleto/state')).body as {
    boletos: { seuNumero: string; valorNominal: string | number }[];
  };
  return state.boletos.filter((b) => Number(b.valorNominal) === Number(value)).map((b) => b.seuNumero);
}

async function situacao(seuNumero: string): Promise<string> {
  const { psp } = await stack();
  const res = await psp.control('GET', `/boleto/boletos/${seuNumero}`);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.cobranca.situacao as string;
}

/**
 * What the passing of time does to a charge's guard (due once its quote expired, and a margin): it is due now. The
 * test does not wait the quote's life and the margin out.
 */
const timePasses = () =>
  sql(`update workflow_starts set next_attempt_at = now() where workflow_id like 'charge-cancel-BOLETO-%'`);

const depositsOf = (accountId: string) =>
  sql<{ id: string }>(`select id from operations where account_id = ? and type = 'DEPOSIT'`, [accountId]);

describe('a BOLETO deposit request that dies after the bank registered its boleto', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  before(async () => {
    c = await newCustomer('Boleto Crash Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  after(killAll);

  it('never retried: the boleto is cancelled once no retry can carry it; retried: it stays payable', async () => {
    const { http, config } = await stack();
    // The stack's worker takes the cancel's provider call on its rails queue, which the API's rows name.
    const env = { CAMBIO_TEST_CRASH_AT: 'before-commit', TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue };
    const crashing = await spawnApi('api-boleto-before-commit', config.taskQueue, env);
    const deposit = (url: string, value: string, key: string, quoteId: string) =>
      fetch(`${url}/api/operations/deposit`, {
        method: 'POST',
        headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
        body: JSON.stringify({ accountId, quoteId, fundingInstruction: { rail: 'BOLETO' } }),
      }).then(
        (r) => `answered ${r.status}`,
        (err: Error) => err,
      );

    // Two requests die the same way: the bank registered each boleto, no deposit committed.
    const abandoned = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '41.00' });
    expect(await deposit(crashing.url, '41.00', randomUUID(), abandoned.id)).to.be.instanceOf(Error);
    await exitWithin(crashing);
    const again = await spawnApi('api-boleto-before-commit-2', config.taskQueue, env);
    const retried = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '42.00' });
    const key = randomUUID();
    expect(await deposit(again.url, '42.00', key, retried.id)).to.be.instanceOf(Error);
    await exitWithin(again);
    expect(await depositsOf(accountId), 'no deposit committed').to.have.length(0);
    const [orphan] = await boletosOf('41.00');
    const [kept] = await boletosOf('42.00');
    expect([await situacao(orphan), await situacao(kept)]).to.deep.equal(['A_RECEBER', 'A_RECEBER']);

    // The second client retries with its key while its quote lives: the deposit shows the boleto its first try made.
    const retry = await http
      .post('/api/operations/deposit')
      .set(c.auth)
      .set('X-Idempotency-Key', key)
      .send({ accountId, quoteId: retried.id, fundingInstruction: { rail: 'BOLETO' } });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.intent.fundingInstruction.seuNumero).to.equal(kept);
    const guardOf = (seuNumero: string) =>
      sql('select 1 from workflow_starts where workflow_id = ?', [`charge-cancel-BOLETO-${seuNumero}`]);
    expect(await guardOf(kept), 'the deposit that carries it took its cancel away').to.have.length(0);

    // The first never retries. Once its quote has expired no request can carry its boleto: it is cancelled at the
    // bank, and the deposit's boleto is left payable.
    await timePasses();
    await eventually(
      () => situacao(orphan),
      (s) => s === 'CANCELADO',
      30000,
      200,
    );
    expect(await situacao(kept)).to.equal('A_RECEBER');
    expect(await boletosOf('41.00'), 'one boleto, never registered again').to.have.length(1);
  });
});
