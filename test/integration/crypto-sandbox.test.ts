// The sandbox inbound-payment route on a CRYPTO deposit sends a real ERC-20 transfer on the local chain (anvil) from
// the sandbox payer, mines EVM_CONFIRMATIONS blocks and has the chain scan record it: the customer sees the
// production path. A retry with the same key sends nothing more. One worker of this file's own (its rails on the
// chain) runs the scan's Schedule, which the route triggers.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { erc20Abi } from 'viem';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config';
import { CryptoRail } from '../../rails/crypto';
import { RAIL_ENTRIES, Rails } from '../../rails/registry';
import { startChain, type TestChain } from '../helpers/chain';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, quote, untilStatus } from '../helpers/money';
import { killAll, spawnWorker } from '../helpers/processes';
import { newCustomer, stack, type TestCustomer } from '../helpers/stack';

const CONFIRMATIONS = 3;

describe('CRYPTO deposits paid by the sandbox route on a real chain', function () {
  this.timeout(180_000);
  let chain: TestChain;
  let api: ReturnType<typeof supertest>;
  let unscanned: ReturnType<typeof supertest>;
  let c: TestCustomer;
  let accountId: string;
  // A chain id of its own: the scanner's cursor is per chain, apart from any other file's.
  const chainId = 32_000 + Math.floor(Math.random() * 900);

  before(async () => {
    const { services, config } = await stack();
    chain = await startChain({ chainId });
    const env = chain.env({ EVM_CONFIRMATIONS: String(CONFIRMATIONS), EVM_SCAN_EVERY_SECONDS: '3600' });
    const taskQueue = `cambio-crypto-sandbox-${randomUUID()}`;
    // The API pays from the sandbox payer; the worker scans (its Schedule runs hourly: the route triggers it).
    const crypto = loadConfig({
      ...process.env,
      ...env,
      EVM_SANDBOX_PAYER_KEY: chain.sandboxPayer.key,
      SANDBOX: 'true',
    }).crypto;
    const rails = new Rails(RAIL_ENTRIES, [...(services.rails?.all() ?? []), new CryptoRail(crypto)]);
    api = supertest(createApp({ ...services, config: { ...config, taskQueue, crypto }, rails }).callback());
    const nowhere = `cambio-crypto-sandbox-unscanned-${randomUUID()}`;
    unscanned = supertest(
      createApp({ ...services, config: { ...config, taskQueue: nowhere, crypto }, rails }).callback(),
    );
    await spawnWorker('crypto-sandbox-worker', taskQueue, { env });
    c = await newCustomer('Crypto Sandbox Ltda');
    accountId = (await activeAccount(c, ['USDC'])).id;
  });
  after(async () => {
    await killAll();
    await chain?.stop();
  });

  const tokenBalance = (of: string) =>
    chain.clients.public.readContract({
      address: chain.tokens.USDC,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [of as `0x${string}`],
    });

  async function cryptoDeposit(value: string) {
    const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: value });
    const res = await api
      .post('/api/operations/deposit')
      .set(c.auth)
      .set('X-Idempotency-Key', randomUUID())
      .send({ accountId, quoteId: q.id, fundingInstruction: { rail: 'CRYPTO' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id: res.body.id as string, walletAddress: res.body.intent.fundingInstruction.walletAddress as string };
  }

  const payThrough = (app: ReturnType<typeof supertest>, operationId: string, value: string, key = randomUUID()) =>
    app
      .post(`/api/sandbox/operations/${operationId}/inbound-payment`)
      .set(c.auth)
      .set('X-Idempotency-Key', key)
      .send({ amount: { value, asset: 'USDC' } });
  const pay = (operationId: string, value: string, key = randomUUID()) => payThrough(api, operationId, value, key);

  it('sends a real transfer, answers the payment the chain scan recorded, and the deposit completes', async () => {
    const before = await chain.blockNumber();
    const dep = await cryptoDeposit('25.00');
    const key = randomUUID();
    const paid = await pay(dep.id, '25.00', key);
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body).to.deep.include({ status: 'MATCHED', operationId: dep.id });
    expect(paid.body.amount).to.deep.include({ value: '25.000000', asset: 'USDC' });
    // The rail reference of a transfer on the chain: `{chainId}:{txHash}:{logIndex}`.
    const [refChain, txHash] = paid.body.endToEndId.split(':');
    expect(Number(refChain)).to.equal(chainId);
    const tx = await chain.clients.public.getTransactionReceipt({ hash: txHash as `0x${string}` });
    expect(tx.from.toLowerCase()).to.equal(chain.sandboxPayer.address.toLowerCase());
    expect(await tokenBalance(dep.walletAddress)).to.equal(25_000_000n);
    // EVM_CONFIRMATIONS blocks deep (the transfer's own counted), mined by the route.
    expect(Number(await chain.blockNumber())).to.be.at.least(Number(tx.blockNumber) + CONFIRMATIONS - 1);
    expect(tx.blockNumber > before).to.equal(true);
    await untilStatus(c, dep.id, 'COMPLETED');
    expect((await balance(c, accountId, 'USDC')).total).to.equal('25.000000');

    // The same key again: the same payment answered, no second transfer, nothing credited twice.
    const head = await chain.blockNumber();
    const again = await pay(dep.id, '25.00', key);
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body.id).to.equal(paid.body.id);
    expect(await tokenBalance(dep.walletAddress)).to.equal(25_000_000n);
    expect(await chain.blockNumber()).to.equal(head);
    expect((await balance(c, accountId, 'USDC')).total).to.equal('25.000000');
    await assertLedgerBalanced();
  });

  it('a retry after a 503 that came after the transfer finds that transfer and sends none', async () => {
    const dep = await cryptoDeposit('7.00');
    const key = randomUUID();
    // An API whose task queue has no scan Schedule: the transfer goes out, the record never comes, 503.
    const first = await payThrough(unscanned, dep.id, '7.00', key);
    expect([first.status, first.body.code], JSON.stringify(first.body)).to.deep.equal([503, 'SERVICE_UNAVAILABLE']);
    expect(first.headers['retry-after']).to.match(/^\d+$/);
    expect(await tokenBalance(dep.walletAddress)).to.equal(7_000_000n);
    // The client's retry with its key, once the scan runs: the same transfer, recorded; no second one.
    const retried = await pay(dep.id, '7.00', key);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
    expect(retried.body).to.deep.include({ status: 'MATCHED', operationId: dep.id });
    expect(await tokenBalance(dep.walletAddress)).to.equal(7_000_000n);
    await untilStatus(c, dep.id, 'COMPLETED');
    expect((await balance(c, accountId, 'USDC')).total).to.equal('32.000000');
  });

  it('a short transfer fails the deposit AMOUNT_MISMATCH, as a short Pix does', async () => {
    const dep = await cryptoDeposit('10.00');
    const paid = await pay(dep.id, '9.50');
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(await tokenBalance(dep.walletAddress)).to.equal(9_500_000n);
    const failed = await untilStatus(c, dep.id, 'FAILED');
    expect(failed.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
    await assertLedgerBalanced();
  });

  it('refuses an amount the token cannot carry, and sends nothing', async () => {
    const dep = await cryptoDeposit('1.00');
    const refused = await pay(dep.id, '1.0000001');
    expect(refused.status, JSON.stringify(refused.body)).to.be.oneOf([400, 422]);
    expect(refused.body.code).to.equal('INVALID_AMOUNT_PRECISION');
    expect(await tokenBalance(dep.walletAddress)).to.equal(0n);
  });

  it("refuses more than the sandbox payer's tokens for good (400, not a 503 to retry), and sends nothing", async () => {
    const dep = await cryptoDeposit('1.00');
    const key = randomUUID();
    const refused = await pay(dep.id, '9999999999.99', key);
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).to.deep.equal([400, 'INVALID_AMOUNT']);
    const again = await pay(dep.id, '9999999999.99', key);
    expect([again.status, again.body.code]).to.deep.equal([400, 'INVALID_AMOUNT']);
    expect(await tokenBalance(dep.walletAddress)).to.equal(0n);
  });
});
