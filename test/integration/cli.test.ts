import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { activeAccount } from '../helpers/fixtures';
import { quote, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { heldWithdrawal } from '../helpers/held-withdrawal';
import { cambioFails } from '../helpers/cli';

const run = promisify(execFile);
const BIN = path.join(__dirname, '..', '..', 'bin', 'cambio.js');

/** The operator CLI exactly as installed: the package bin, its own process, the stack's database and Temporal. */
async function cambio(...args: string[]) {
  const { config } = await stack();
  return run(process.execPath, [BIN, ...args], {
    env: {
      ...process.env,
      TEMPORAL_TASK_QUEUE: config.taskQueue,
      TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
      LOG_LEVEL: 'warn',
    },
  });
}

/** A BRL to BRL deposit of `value` on `accountId` by `rail`, as the API answers its POST. */
async function brlDeposit(c: TestCustomer, accountId: string, value: string, rail: 'PIX_KEY' | 'TED') {
  const { http } = await stack();
  const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
  return http
    .post('/api/operations/deposit')
    .set(c.auth)
    .set(idem())
    .send({ accountId, quoteId: q.id, fundingInstruction: { rail } });
}

describe('operator CLI', function () {
  this.timeout(60000);

  it('creates a customer whose printed credentials obtain a token; the secret is stored only as a hash', async () => {
    const { http, services } = await stack();
    const created = JSON.parse((await cambio('customer', 'create', '--name', 'Acme CLI', '--json')).stdout);
    expect(created).to.have.all.keys('customerId', 'clientId', 'clientSecret');
    const token = await http
      .post('/api/oauth/client/token')
      .send({ clientId: created.clientId, clientSecret: created.clientSecret });
    expect(token.status).to.equal(200);
    const [row] = await services.orm.em
      .fork()
      .getConnection()
      .execute('select secret_hash from api_clients where client_id = ?', [created.clientId]);
    expect(row.secret_hash).to.match(/^scrypt\$/);
    expect(row.secret_hash).not.to.contain(created.clientSecret);
  });

  it('records a payment and replays a failed deposit to COMPLETED', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    const dep = await brlDeposit(c, account.id, '75.00', 'TED');
    expect(dep.status).to.equal(201);
    const short = JSON.parse(
      (
        await cambio(
          'deposit',
          'pay',
          dep.body.id,
          '--amount',
          '50.00',
          '--asset',
          'BRL',
          '--end-to-end',
          'E-cli-1',
          '--json',
        )
      ).stdout,
    );
    expect(short).to.deep.include({ status: 'MATCHED', operationId: dep.body.id });
    const failed = await untilStatus(c, dep.body.id, 'FAILED');
    expect(failed.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
    await cambio('deposit', 'pay', dep.body.id, '--amount', '25.00', '--asset', 'BRL', '--end-to-end', 'E-cli-2');
    const replayed = await cambio('deposit', 'replay', dep.body.id);
    expect(replayed.stdout.trim()).to.equal(`operation ${dep.body.id} is COMPLETED`);
    await untilStatus(c, dep.body.id, 'COMPLETED');
  });

  it('refuses to record a deposit payment in an asset its rail never carries, and records nothing', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL', 'USDC']);
    const dep = await brlDeposit(c, account.id, '10.00', 'TED');
    expect(dep.status).to.equal(201);
    const refused = async (asset: string) => {
      const args = ['deposit', 'pay', dep.body.id, '--amount', '10.00', '--asset', asset, '--end-to-end', `E-${asset}`];
      const failure = await cambioFails(...args);
      expect(failure.exitCode).to.equal(1);
      return failure.body.code;
    };
    // A TED carries reais only: USDC "paid" by TED is money no bank moved, and would reach suspense to be credited.
    expect(await refused('USDC')).to.equal('RAIL_ASSET_MISMATCH');
    expect(await refused('XYZ')).to.equal('VALIDATION_ERROR');
    const payments = await http.get('/api/inbound-payments').set(c.auth);
    expect(payments.status).to.equal(200);
    expect(payments.body.data).to.deep.equal([]);
  });

  it('refuses a replay of a deposit that did not fail, with the error code and a non-zero exit', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    const dep = await brlDeposit(c, account.id, '10.00', 'TED');
    const failure = await cambio('deposit', 'replay', dep.body.id).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure, 'the command fails').to.not.equal(undefined);
    expect(failure!.code).to.equal(1);
    expect(JSON.parse(failure!.stderr.trim().split('\n').pop()!).code).to.equal('INVALID_STATE');
  });
});

describe('operator CLI: tags and held withdrawals', function () {
  this.timeout(60000);

  it('tags an account; propagating tags are stamped on its new operations and filter them', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    const tagged = JSON.parse(
      (
        await cambio(
          'account',
          'tag',
          account.id,
          '--key',
          'cost-center',
          '--value',
          'treasury',
          '--propagate',
          '--json',
        )
      ).stdout,
    );
    expect(tagged.tags).to.deep.equal([{ key: 'cost-center', value: 'treasury' }]);
    await cambio('account', 'tag', account.id, '--key', 'internal', '--value', 'not-copied');
    const dep = await brlDeposit(c, account.id, '10.00', 'PIX_KEY');
    expect(dep.body.tags).to.deep.equal([{ key: 'cost-center', value: 'treasury' }]);
    const listed = await http
      .get('/api/operations')
      .query({ filters: 'and(tags.key[eq]=cost-center,tags.value[eq]=treasury)' })
      .set(c.auth);
    expect(listed.body.data.map((o: { id: string }) => o.id)).to.deep.equal([dep.body.id]);
  });

  it('lists the withdrawals held for review, oldest first, and approves one: it leaves the list', async () => {
    const c = await newCustomer();
    const id = await heldWithdrawal(c, 'big@example.com');
    const held = async () => JSON.parse((await cambio('operation', 'list', '--held', '--json')).stdout);
    const listed = (await held()).find((row: { id: string }) => row.id === id);
    expect(listed).to.deep.include({ customerId: c.customerId, status: 'ON_HOLD' });
    expect(listed.amount).to.deep.equal({ value: '55000.00', asset: 'BRL' });
    expect(listed.since).to.match(/^\d{4}-\d\d-\d\dT.*Z$/);
    const text = (await cambio('operation', 'list', '--held')).stdout;
    expect(text).to.contain(`${id} ON_HOLD 55000.00 BRL since ${listed.since}`);
    const approved = await cambio('withdrawal', 'approve', id);
    expect(approved.stdout.trim()).to.equal(`operation ${id} is COMPLETED`);
    expect((await held()).map((row: { id: string }) => row.id)).to.not.include(id);
  });

  // The hold is a review of where the money goes: the list shows the payee the withdrawal pays, as it will be paid
  // (the operation's own snapshot of the approved instruction), so an operator never approves one blind (0310).
  it('shows where each held withdrawal pays: the holder and the rail, key type and key', async () => {
    const c = await newCustomer();
    const id = await heldWithdrawal(c, 'payee-shown@example.com');
    const rows = JSON.parse((await cambio('operation', 'list', '--held', '--json')).stdout);
    const listed = rows.find((row: { id: string }) => row.id === id);
    expect(listed.payee).to.deep.include({ name: 'Maria Silva' });
    expect(listed.payee.paymentInstruction).to.deep.include({
      rail: 'PIX_KEY',
      keyType: 'EMAIL',
      key: 'payee-shown@example.com',
    });
    expect(listed.payee.beneficiaryId).to.match(/^[0-9a-f-]{36}$/);
    const text = (await cambio('operation', 'list', '--held')).stdout;
    const line = text.split('\n').find((l) => l.startsWith(id));
    expect(line).to.equal(
      `${id} ON_HOLD 55000.00 BRL since ${listed.since} to Maria Silva by PIX_KEY EMAIL payee-shown@example.com`,
    );
  });
});
