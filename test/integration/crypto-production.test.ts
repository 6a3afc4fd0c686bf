// A production deployment (SANDBOX=false) without EVM_RPC_URL has no CRYPTO rail (../shared/spec/decisions.md,
// "Crypto: stablecoins on a real chain (EVM)"): its API answers a CRYPTO deposit and a withdrawal to a WALLET with
// 422 RAIL_NOT_CONFIGURED before anything exists or is held, and its worker fails a WALLET payout that reaches it
// (created by a process that had the node) RAIL_NOT_CONFIGURED with the hold released: nothing was sent.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { getAddress } from 'viem';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config';
import { approvedBeneficiary, referenceBeneficiary } from '../helpers/beneficiary-fixtures';
import { startChain, type TestChain } from '../helpers/chain';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, fund, quote } from '../helpers/money';
import { killAll, spawnApi, spawnWorker, type ApiProc } from '../helpers/processes';
import { eventually, idem, newCustomer, stack, type TestCustomer } from '../helpers/stack';

// Whatever the test run's environment holds, these processes have no node.
const NO_CHAIN = { SANDBOX: 'false', EVM_RPC_URL: '', CRYPTO_HOT_WALLET_KEY: '', CRYPTO_HOT_WALLET_KEY_FILE: '' };

describe('CRYPTO outside sandbox mode without a node', function () {
  this.timeout(180_000);
  let api: ApiProc;
  let c: TestCustomer;
  let accountId: string;

  before(async () => {
    const { config } = await stack();
    api = await spawnApi('production-api-without-chain', config.taskQueue, NO_CHAIN);
    c = await newCustomer('Production No Chain Ltda');
    accountId = (await activeAccount(c, ['USDC'])).id;
    await fund(c, accountId, 'USDC', '50.000000');
  });
  after(killAll);

  const post = (path: string, body: unknown) =>
    fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { ...c.auth, ...idem(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, any> }));

  /** A WALLET beneficiary, approved (through the sandbox's review route of the stack's API). */
  async function approvedWallet() {
    const address = getAddress(`0x${randomUUID().replace(/-/g, '')}12345678`);
    const instruction = { type: 'WALLET', asset: 'USDC', network: 'ETHEREUM', address };
    const { beneficiaryId, instructionId } = await approvedBeneficiary(c, instruction);
    return referenceBeneficiary(beneficiaryId, instructionId);
  }

  it('the API: a CRYPTO deposit is 422 RAIL_NOT_CONFIGURED, and nothing is created', async () => {
    const ready = (await (await fetch(`${api.url}/readyz`)).json()) as { sandbox: boolean };
    expect(ready.sandbox).to.equal(false);
    const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '10.00' });
    const res = await post('/api/operations/deposit', {
      accountId,
      quoteId: q.id,
      fundingInstruction: { rail: 'CRYPTO' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.code).to.equal('RAIL_NOT_CONFIGURED');
    const { http } = await stack();
    const listed = await http.get('/api/operations').query({ limit: 100 }).set(c.auth);
    expect(listed.body.data.filter((op: { type: string }) => op.type === 'DEPOSIT')).to.deep.equal([]);
  });

  it('the API: a withdrawal to a WALLET is 422 RAIL_NOT_CONFIGURED, nothing held', async () => {
    const beneficiary = await approvedWallet();
    const before = await balance(c, accountId, 'USDC');
    const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '5.000000' });
    const res = await post('/api/operations/withdrawal', { accountId, quoteId: q.id, beneficiary });
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
  });

  describe('the worker', () => {
    let chain: TestChain;
    after(async () => chain?.stop());

    it('fails a WALLET payout that reaches it RAIL_NOT_CONFIGURED, the hold released, nothing sent', async () => {
      const { services, config } = await stack();
      chain = await startChain({ chainId: 33_000 + Math.floor(Math.random() * 900) });
      const taskQueue = `crypto-production-${randomUUID()}`;
      await spawnWorker('production-worker-without-chain', taskQueue, { env: NO_CHAIN });
      // Created by an API that had the node and the key, started on the queue of the worker that has neither.
      const crypto = loadConfig({ ...process.env, ...chain.env({ SANDBOX: 'true' }) }).crypto;
      const withChain = supertest(createApp({ ...services, config: { ...config, taskQueue, crypto } }).callback());
      const beneficiary = await approvedWallet();
      const before = await balance(c, accountId, 'USDC');
      const sent = () => chain.clients.public.getTransactionCount({ address: chain.hotWallet.address });
      const nonce = await sent();
      const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '3.000000' });
      const res = await withChain
        .post('/api/operations/withdrawal')
        .set(c.auth)
        .set(idem())
        .send({ accountId, quoteId: q.id, beneficiary });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const { http } = await stack();
      const failed = await eventually(
        async () => (await http.get(`/api/operations/${res.body.id}`).set(c.auth)).body,
        (op) => op.currentState?.status === 'FAILED',
        60_000,
        250,
      );
      expect(failed.currentState.reason.code).to.equal('RAIL_NOT_CONFIGURED');
      expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
      expect(await sent()).to.equal(nonce);
      await assertLedgerBalanced();
    });
  });
});
