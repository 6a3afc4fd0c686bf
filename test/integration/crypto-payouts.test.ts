// Withdrawals to WALLET instructions pay out from the hot wallet on a real local chain (anvil): one ERC-20 transfer
// per withdrawal, COMPLETED after EVM_CONFIRMATIONS with the transaction's hash, a revert FAILED after as many with
// the hold released, a wallet short of tokens PROCESSING until funded, and concurrent withdrawals on consecutive
// nonces, each given by an update of the hot wallet's workflow (its history shows them), a worker killed mid-burst
// included; the requests waiting together get their nonces in one activity, and a row the database refuses fails
// alone.
// One worker process of this file's own (its rails connected to the chain) runs the withdrawals.
import { randomUUID } from 'node:crypto';
import { type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { expect } from 'chai';
import supertest from 'supertest';
import { encodeAbiParameters, encodeFunctionData, erc20Abi, getAddress, keccak256, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config';
import { OperationSchema } from '../../db/entities';
import { systemEm } from '../../db/orm';
import { outgoingNonces, refuseOutgoingUnordered } from '../../db/repositories/crypto-outgoing';
import { payoutIdFor } from '../../rails/pix/ids';
import { temporalNonceWriter } from '../../activities/hot-wallet-nonces';
import { railStores } from '../../activities/rail-stores';
import { CryptoRail } from '../../rails/crypto';
import type { OutgoingTx } from '../../rails/crypto/outgoing-store';
import type { hotWalletWorkflow } from '../../workflows/hot-wallet';
import { hotWalletWorkflowId, operationWorkflowId } from '../../workflows/ids';
import { approvedBeneficiary, beneficiaryBody, referenceBeneficiary } from '../helpers/beneficiary-fixtures';
import { startChain, type TestChain } from '../helpers/chain';
import { activityEnds, historyEvents } from '../helpers/histories';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';
import { activeAccount } from '../helpers/fixtures';
import { balance, fund, getOp, quote } from '../helpers/money';
import { kill, KILLED_WORKER_ENV, killAll, type Proc, spawnWorker } from '../helpers/processes';
import { eventually, idem, newCustomer, stack, type TestCustomer } from '../helpers/stack';

const CONFIRMATIONS = 2;

describe('CRYPTO payouts from the hot wallet', function () {
  this.timeout(180000);
  let chain: TestChain;
  let c: TestCustomer;
  let accountId: string;
  let api: ReturnType<typeof supertest>;
  let worker: Proc;
  let workerEnv: Record<string, string>;
  let taskQueue: string;
  let cryptoConfig: ReturnType<typeof loadConfig>['crypto'];

  before(async () => {
    const { services, config } = await stack();
    chain = await startChain();
    const env = { ...chain.env({ EVM_CONFIRMATIONS: String(CONFIRMATIONS) }), ...KILLED_WORKER_ENV };
    workerEnv = env;
    taskQueue = `cambio-crypto-payouts-${randomUUID()}`;
    // The API that creates the withdrawals knows the chain (a WALLET payout needs it) and starts them on the queue
    // of this file's worker.
    const crypto = loadConfig({ ...process.env, ...env, SANDBOX: 'true' }).crypto;
    cryptoConfig = crypto;
    api = supertest(createApp({ ...services, config: { ...config, taskQueue, crypto } }).callback());
    worker = await spawnWorker('crypto-payouts-worker', taskQueue, { env });
    c = await newCustomer('Crypto Payouts Ltda');
    accountId = (await activeAccount(c, ['USDC', 'EURC'] as never)).id;
    await fund(c, accountId, 'USDC', '1000.000000');
    await fund(c, accountId, 'EURC', '100.000000');
  });
  after(async () => {
    await killAll();
    await chain?.stop();
  });

  const tokenBalance = (asset: 'USDC' | 'EURC', of: `0x${string}`) =>
    chain.clients.public.readContract({
      address: chain.tokens[asset] as `0x${string}`,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [of],
    });

  const freshAddress = () => getAddress(`0x${randomUUID().replace(/-/g, '')}${'ab12cd34'}`);

  async function approvedWallet(address: string, asset = 'USDC') {
    const instruction = { type: 'WALLET', asset, network: 'ETHEREUM', address };
    const { beneficiaryId, instructionId, created } = await approvedBeneficiary(c, instruction);
    expect(created.paymentInstructions[0].address).to.deep.equal({
      rail: 'CRYPTO',
      type: 'WALLET',
      network: 'ETHEREUM',
      address: getAddress(address),
    });
    return { beneficiaryId, instructionId };
  }

  async function withdraw(to: string, value: string, asset = 'USDC') {
    const { beneficiaryId, instructionId } = await approvedWallet(to, asset);
    const q = await quote(c, { accountId, sourceAsset: asset, targetAsset: asset, sourceAmount: value });
    const res = await api
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, beneficiary: referenceBeneficiary(beneficiaryId, instructionId) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.id as string;
  }

  const endToEnd = async (operationId: string) => {
    const { services } = await stack();
    const op = await systemEm(services.orm).findOneOrFail(OperationSchema, { id: operationId }, { refresh: true });
    return op.transactions[0]?.endToEnd as `0x${string}`;
  };

  /** The answers of the payout's provider calls (send, follow) its workflow has had so far, oldest first. */
  async function payoutAnswers(operationId: string): Promise<Array<{ status: string; reason?: string }>> {
    const { services } = await stack();
    const events = await historyEvents(services.temporal.workflow.getHandle(operationWorkflowId(operationId)));
    return activityEnds(events, ['railSendPayout', 'railFollowPayout'])
      .filter((end) => end.completed)
      .map((end) => defaultPayloadConverter.fromPayload(end.completed!.result!.payloads![0] as Payload));
  }

  /** Mines blocks until the withdrawal is COMPLETED or FAILED (anvil mines each transaction, not the confirmations). */
  async function untilSettled(operationId: string, timeoutMs = 30000) {
    return eventually(
      async () => {
        await chain.mine(1);
        return getOp(c, operationId);
      },
      (op) => ['COMPLETED', 'FAILED'].includes(op.currentState.status),
      timeoutMs,
      200,
    );
  }

  it('refuses a bad checksum, a malformed address and another network with 400 naming the field', async () => {
    const { http } = await stack();
    const good = getAddress(chain.payers[0]);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ address: flipFirstLetter(good) }, '/paymentInstruction/address'],
      [{ address: '0x1234' }, '/paymentInstruction/address'],
      [{ address: `${good.slice(0, 41)}g` }, '/paymentInstruction/address'],
      [{ network: 'TRON' }, '/paymentInstruction/network'],
    ];
    for (const [override, path] of cases) {
      const instruction = { type: 'WALLET', asset: 'USDC', network: 'ETHEREUM', address: good, ...override };
      const res = await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody(instruction));
      expect(res.status, JSON.stringify(override)).to.equal(400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(res.body.details.errors.map((e: { path: string }) => e.path)).to.include(path);
    }
  });

  it('refuses an instruction to the zero address or to a token contract with 400 naming the address', async () => {
    for (const address of [zeroAddress, chain.tokens.USDC, chain.tokens.EURC.toLowerCase()]) {
      const instruction = { type: 'WALLET', asset: 'USDC', network: 'ETHEREUM', address };
      const res = await api.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody(instruction));
      expect(res.status, address).to.equal(400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(res.body.details.errors.map((e: { path: string }) => e.path)).to.include('/paymentInstruction/address');
    }
  });

  it('a payout to an address nobody can spend from is FAILED before any transfer, the hold released', async () => {
    // Saved where the API did not know the chain's tokens (the stack's own API), so only the worker can tell.
    const usdc = chain.tokens.USDC as `0x${string}`;
    const before = await balance(c, accountId, 'USDC');
    const hotNonce = await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address });
    const stock = await tokenBalance('USDC', usdc);
    const id = await withdraw(usdc, '2.000000');
    const done = await untilSettled(id);
    expect(done.currentState.status).to.equal('FAILED');
    // The customer's words name no other rail (a WALLET payout read "rejected the PIX payout"), and say why
    // (decision 0319).
    expect(done.currentState.reason).to.deep.equal({
      code: 'PAYOUT_REJECTED',
      message:
        "the payout was rejected: the payee's address is a token's own contract, which would keep it for good; " +
        'nothing was paid and the hold is released',
      details: {},
    });
    expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
    expect(await tokenBalance('USDC', usdc)).to.equal(stock);
    expect(await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address })).to.equal(hotNonce);
  });

  it('a deployment without the node or the hot wallet refuses a WALLET withdrawal: 422, nothing held', async () => {
    // The stack's own API has no EVM_RPC_URL.
    const { http } = await stack();
    const before = await balance(c, accountId, 'USDC');
    const { beneficiaryId, instructionId } = await approvedWallet(freshAddress());
    const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '1.000000' });
    const res = await http
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, beneficiary: referenceBeneficiary(beneficiaryId, instructionId) });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
  });

  it('a stablecoin with no contract: 422 at the API, FAILED RAIL_NOT_CONFIGURED at a worker lacking it', async () => {
    const { services, config } = await stack();
    // This deployment knows the chain and holds the key, but has no BRLT contract (EVM_TOKEN_BRLT unset).
    const noBrlt = { ...workerEnv, EVM_TOKEN_BRLT: '' };
    const account = (await activeAccount(c, ['BRLT'] as never)).id;
    await fund(c, account, 'BRLT', '10.000000');
    const before = await balance(c, account, 'BRLT');
    const hotNonce = await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address });
    const { beneficiaryId, instructionId } = await approvedWallet(freshAddress(), 'BRLT');
    const withdrawOn = async (queue: string, crypto: typeof cryptoConfig, value: string) => {
      const app = supertest(createApp({ ...services, config: { ...config, taskQueue: queue, crypto } }).callback());
      const q = await quote(c, { accountId: account, sourceAsset: 'BRLT', targetAsset: 'BRLT', sourceAmount: value });
      return app
        .post('/api/operations/withdrawal')
        .set(c.auth)
        .set(idem())
        .send({ accountId: account, quoteId: q.id, beneficiary: referenceBeneficiary(beneficiaryId, instructionId) });
    };
    // Its API refuses the withdrawal up front: nothing could pay it, and nothing is held.
    const lacking = loadConfig({ ...process.env, ...noBrlt, SANDBOX: 'true' }).crypto;
    const refused = await withdrawOn(taskQueue, lacking, '1.000000');
    expect(refused.status, JSON.stringify(refused.body)).to.equal(422);
    expect(refused.body.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(await balance(c, account, 'BRLT')).to.deep.equal(before);
    // A worker without it, behind an API configured otherwise, sends nothing: FAILED, the hold released, never
    // PROCESSING for ever with the money held.
    const queue = `cambio-crypto-no-brlt-${randomUUID()}`;
    const lean = await spawnWorker('crypto-no-brlt-worker', queue, { env: noBrlt });
    try {
      const accepted = await withdrawOn(queue, cryptoConfig, '2.000000');
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(201);
      const done = await eventually(
        () => getOp(c, accepted.body.id),
        (op) => ['COMPLETED', 'FAILED'].includes(op.currentState.status),
        30000,
      );
      expect(done.currentState.status).to.equal('FAILED');
      expect(done.currentState.reason.code).to.equal('RAIL_NOT_CONFIGURED');
      expect(await balance(c, account, 'BRLT')).to.deep.equal(before);
      expect(await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address })).to.equal(hotNonce);
    } finally {
      await kill(lean);
    }
  });

  it('a WALLET approved on another network is not paid on this chain: 422, nothing held', async () => {
    const { services, config } = await stack();
    const before = await balance(c, accountId, 'USDC');
    const { beneficiaryId, instructionId } = await approvedWallet(freshAddress());
    // The deployment pays on another chain now (CRYPTO_NETWORK changed): the address was approved on ETHEREUM, where
    // it may be a contract that exists there alone.
    const crypto = loadConfig({ ...process.env, ...workerEnv, SANDBOX: 'true', CRYPTO_NETWORK: 'POLYGON' }).crypto;
    const app = supertest(createApp({ ...services, config: { ...config, taskQueue, crypto } }).callback());
    const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '1.000000' });
    const res = await app
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, beneficiary: referenceBeneficiary(beneficiaryId, instructionId) });
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(res.body.details).to.deep.include({ rail: 'CRYPTO', network: 'ETHEREUM' });
    expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
  });

  it('a WALLET withdrawal accepted before the network changed fails before any transfer, hold released', async () => {
    // Accepted while the deployment paid on POLYGON (its API's CRYPTO_NETWORK), paid by a worker on ETHEREUM now, as a
    // withdrawal ON_HOLD across the change would be once approved: the address was reviewed for POLYGON alone.
    const { services, config } = await stack();
    const crypto = loadConfig({ ...process.env, ...workerEnv, SANDBOX: 'true', CRYPTO_NETWORK: 'POLYGON' }).crypto;
    const polygon = supertest(createApp({ ...services, config: { ...config, taskQueue, crypto } }).callback());
    const to = freshAddress();
    const instruction = { type: 'WALLET', asset: 'USDC', network: 'POLYGON', address: to };
    const created = await polygon.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody(instruction));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const instructionId: string = created.body.paymentInstructions[0].id;
    const reviewed = await polygon
      .post(`/api/sandbox/payment-instructions/${instructionId}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'APPROVE' });
    expect(reviewed.status, JSON.stringify(reviewed.body)).to.equal(200);
    const before = await balance(c, accountId, 'USDC');
    const hotNonce = await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address });
    const q = await quote(c, { accountId, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '1.000000' });
    const res = await polygon
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, beneficiary: referenceBeneficiary(created.body.id, instructionId) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const done = await untilSettled(res.body.id);
    expect(done.currentState.status).to.equal('FAILED');
    expect(done.currentState.reason.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
    expect(await tokenBalance('USDC', to)).to.equal(0n);
    expect(await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address })).to.equal(hotNonce);
    // The refusal is recorded before the hold's release: no nonce request of an earlier attempt can take one now.
    const refusal = await systemEm(services.orm).execute('select reason from crypto_transfer_refusals where id = ?', [
      `payout:${payoutIdFor(res.body.id)}`,
    ]);
    expect(refusal.map((r) => r.reason)).to.deep.equal([
      'this deployment pays on ETHEREUM; the WALLET was approved on POLYGON',
    ]);
  });

  it('completes with the transaction hash as endToEnd; the recipient gets the tokens exactly once', async () => {
    const to = freshAddress();
    const before = await balance(c, accountId, 'USDC');
    const id = await withdraw(to, '12.345678');
    const done = await untilSettled(id);
    expect(done.currentState.status).to.equal('COMPLETED');
    const hash = await endToEnd(id);
    const receipt = await chain.clients.public.getTransactionReceipt({ hash });
    expect(receipt.status).to.equal('success');
    expect(getAddress(receipt.from)).to.equal(getAddress(chain.hotWallet.address));
    await chain.mine(3);
    expect(await tokenBalance('USDC', to)).to.equal(12_345_678n);
    expect((await balance(c, accountId, 'USDC')).total).to.equal((Number(before.total) - 12.345678).toFixed(6));
  });

  it('a hot wallet short of tokens keeps the payout PROCESSING (money held), then pays once it is funded', async () => {
    const hot = chain.hotWallet.address;
    const eurc = chain.tokens.EURC as `0x${string}`;
    const stock = await tokenBalance('EURC', hot);
    await setTokenBalance(eurc, hot, 0n);
    const to = freshAddress();
    const id = await withdraw(to, '5.000000', 'EURC');
    await eventually(
      () => getOp(c, id),
      (op) => op.currentState.status === 'PROCESSING',
      20000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    await chain.mine(CONFIRMATIONS + 1);
    const waiting = await getOp(c, id);
    expect(waiting.currentState.status, 'never FAILED while the wallet is short').to.equal('PROCESSING');
    expect((await balance(c, accountId, 'EURC')).held).to.equal('5.000000');
    expect(await tokenBalance('EURC', to)).to.equal(0n);
    await setTokenBalance(eurc, hot, stock);
    const done = await untilSettled(id, 90000);
    expect(done.currentState.status).to.equal('COMPLETED');
    await chain.mine(3);
    expect(await tokenBalance('EURC', to)).to.equal(5_000_000n);
  });

  it('withdrawals at once the hot wallet covers only one of: one paid, the rest PROCESSING, none FAILED', async () => {
    const hot = chain.hotWallet.address;
    const eurc = chain.tokens.EURC as `0x${string}`;
    const stock = await tokenBalance('EURC', hot);
    // Enough for one withdrawal of 5, not two: each funds check alone passes, together they do not.
    await setTokenBalance(eurc, hot, 6_000_000n);
    try {
      const targets = Array.from({ length: 3 }, () => freshAddress());
      const ids = await Promise.all(targets.map((to) => withdraw(to, '5.000000', 'EURC')));
      const first = await eventually(
        async () => {
          await chain.mine(1);
          return Promise.all(ids.map((id) => getOp(c, id)));
        },
        (ops) => ops.some((op) => ['COMPLETED', 'FAILED'].includes(op.currentState.status)),
        60000,
        200,
      );
      // Time for any other transfer to be mined and confirmed (a revert is FAILED once CONFIRMATIONS deep).
      await new Promise((r) => setTimeout(r, 2000));
      await chain.mine(CONFIRMATIONS + 1);
      await new Promise((r) => setTimeout(r, 2000));
      const states = (await Promise.all(ids.map((id) => getOp(c, id)))).map((op) => op.currentState.status);
      expect(
        states.filter((s) => s === 'COMPLETED'),
        JSON.stringify(first.map((o) => o.currentState)),
      ).to.have.length(1);
      expect(
        states.filter((s) => s === 'PROCESSING'),
        'never FAILED while the wallet is short',
      ).to.have.length(2);
      await setTokenBalance(eurc, hot, stock);
      const done = await Promise.all(ids.map((id) => untilSettled(id, 90000)));
      expect(done.map((op) => op.currentState.status)).to.deep.equal(ids.map(() => 'COMPLETED'));
      await chain.mine(3);
      for (const to of targets) expect(await tokenBalance('EURC', to)).to.equal(5_000_000n);
    } finally {
      await setTokenBalance(eurc, hot, stock);
    }
  });

  it('a reverted transfer waits for its confirmations, then is FAILED PAYOUT_REJECTED, the hold released', async () => {
    const hot = chain.hotWallet.address;
    const usdc = chain.tokens.USDC as `0x${string}`;
    const stock = await tokenBalance('USDC', hot);
    const before = await balance(c, accountId, 'USDC');
    await anvil('evm_setAutomine', [false]);
    try {
      const id = await withdraw(freshAddress(), '3.000000');
      const held = await balance(c, accountId, 'USDC');
      // The transfer is signed and in the node's pool; the wallet's tokens go before it is mined: it reverts.
      const { services } = await stack();
      const rowId = `payout:${payoutIdFor(id)}`;
      const hash = await eventually(
        async () =>
          (await systemEm(services.orm).execute(`select hash from crypto_outgoing_txs where id = ?`, [rowId]))[0]?.hash,
        (h) => !!h,
        20000,
      );
      await eventually(
        () => chain.clients.public.getTransaction({ hash }).catch(() => undefined),
        (tx) => !!tx,
        20000,
      );
      await setTokenBalance(usdc, hot, 0n);
      // One block: the revert is 1 of CONFIRMATIONS deep, and a reorg could still drop it and mine the same bytes
      // with success. The workflow reads the transfer again meanwhile (its pauses start at 250 ms); the hold stays.
      await chain.mine(1);
      const receipt = await eventually(
        () => chain.clients.public.getTransactionReceipt({ hash }).catch(() => undefined),
        (r) => !!r,
        20000,
      );
      expect(receipt?.status).to.equal('reverted');
      // Until the workflow has had the payout's answer since the revert was mined (its reads back off from 250 ms).
      const answers = await eventually(
        () => payoutAnswers(id),
        (all) => all.some((a) => a.status !== 'PENDING' || a.reason?.includes('reverted')),
        30000,
      );
      expect(answers.at(-1), 'not final before its confirmations').to.deep.include({ status: 'PENDING' });
      const waiting = await getOp(c, id);
      expect(waiting.currentState.status, 'not final before its confirmations').to.equal('PROCESSING');
      expect((await balance(c, accountId, 'USDC')).held).to.equal(held.held);
      await anvil('evm_setAutomine', [true]);
      const failed = await untilSettled(id);
      expect(failed.currentState.status).to.equal('FAILED');
      expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
      expect((await chain.clients.public.getTransactionReceipt({ hash })).status).to.equal('reverted');
      expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
    } finally {
      await anvil('evm_setAutomine', [true]);
      await setTokenBalance(usdc, hot, stock);
    }
  });

  // An operator may replace a hot wallet transfer stuck in the pool with another one on the same nonce (decision
  // 0135 leaves a fee too low to them): a cancel, or a speed-up paying the same. Our bytes can then never be mined.
  describe('a transfer whose nonce another transaction took (decision 0294)', () => {
    /**
     * Withdraws `value` USDC to `to` with the chain holding blocks back, and once its transfer is in the node's pool
     * sends `replacement(nonce)` from the hot wallet's key on the same nonce at twice the fee, then mines one block.
     */
    async function replaced(to: `0x${string}`, value: string, replacement: (tx: { nonce: number }) => object) {
      await anvil('evm_setAutomine', [false]);
      const id = await withdraw(to, value);
      const { services } = await stack();
      const rowId = `payout:${payoutIdFor(id)}`;
      const ours = await eventually(
        async () =>
          (await systemEm(services.orm).execute(`select hash from crypto_outgoing_txs where id = ?`, [rowId]))[0]?.hash,
        (h) => !!h,
        20000,
      );
      const pooled = await eventually(
        () => chain.clients.public.getTransaction({ hash: ours }).catch(() => undefined),
        (tx) => !!tx,
        20000,
      );
      const other = await chain.clients.wallet.sendTransaction({
        account: privateKeyToAccount(chain.hotWallet.key),
        chain: chain.clients.wallet.chain,
        nonce: pooled!.nonce,
        maxFeePerGas: pooled!.maxFeePerGas! * 2n,
        maxPriorityFeePerGas: pooled!.maxPriorityFeePerGas! * 2n + 1n,
        ...replacement({ nonce: pooled!.nonce }),
      } as never);
      await chain.mine(1);
      const receipt = await chain.clients.public.getTransactionReceipt({ hash: other });
      expect(receipt.status).to.equal('success');
      return { id, ours: ours as `0x${string}`, other };
    }

    afterEach(() => anvil('evm_setAutomine', [true]));

    it('a cancel on its nonce, once confirmed: FAILED PAYOUT_REJECTED, the hold released once', async () => {
      const to = freshAddress();
      const before = await balance(c, accountId, 'USDC');
      const { id, ours } = await replaced(to, '4.000000', () => ({ to: chain.hotWallet.address, value: 0n }));
      // One block deep of CONFIRMATIONS: the cancel could still be reorganised away and ours mined. The workflow
      // reads the payout again meanwhile (its pauses start at 250 ms); the hold stays.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await getOp(c, id)).currentState.status, 'not final before its confirmations').to.equal('PROCESSING');
      expect((await balance(c, accountId, 'USDC')).held).to.not.equal(before.held);
      await anvil('evm_setAutomine', [true]);
      const failed = await untilSettled(id);
      expect(failed.currentState.status).to.equal('FAILED');
      expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
      expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
      await chain.mine(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(await balance(c, accountId, 'USDC'), 'released once').to.deep.equal(before);
      expect(await tokenBalance('USDC', to)).to.equal(0n);
      expect(await chain.clients.public.getTransactionReceipt({ hash: ours }).catch(() => undefined)).to.equal(
        undefined,
      );
    });

    it('a worker killed with the cancel mined: a restarted one fails it once, the hold released', async () => {
      const to = freshAddress();
      const before = await balance(c, accountId, 'USDC');
      const { id } = await replaced(to, '5.000000', () => ({ to: chain.hotWallet.address, value: 0n }));
      // Nothing of the answer lives in the worker: the new one reads it from the chain, and the operation takes
      // the payout's first final answer only.
      await kill(worker);
      await anvil('evm_setAutomine', [true]);
      await chain.mine(CONFIRMATIONS + 1);
      worker = await spawnWorker('crypto-payouts-worker-3', taskQueue, { env: workerEnv });
      const failed = await untilSettled(id, 90000);
      expect(failed.currentState.status).to.equal('FAILED');
      expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
      await chain.mine(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(await balance(c, accountId, 'USDC')).to.deep.equal(before);
      expect(await tokenBalance('USDC', to)).to.equal(0n);
    });

    it('a speed-up paying the same recipient the same amount: COMPLETED with its hash, paid once', async () => {
      const to = freshAddress();
      const before = await balance(c, accountId, 'USDC');
      const usdc = chain.tokens.USDC as `0x${string}`;
      const { id, other } = await replaced(to, '6.000000', () => ({
        to: usdc,
        gas: 120_000n,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, 6_000_000n] }),
      }));
      await anvil('evm_setAutomine', [true]);
      const done = await untilSettled(id);
      expect(done.currentState.status).to.equal('COMPLETED');
      expect(await endToEnd(id)).to.equal(other);
      await chain.mine(3);
      expect(await tokenBalance('USDC', to)).to.equal(6_000_000n);
      expect((await balance(c, accountId, 'USDC')).total).to.equal((Number(before.total) - 6).toFixed(6));
      expect((await balance(c, accountId, 'USDC')).held).to.equal(before.held);
    });

    it('a replacement paying the recipient another amount: PROCESSING with the reason, the hold kept', async () => {
      const to = freshAddress();
      const usdc = chain.tokens.USDC as `0x${string}`;
      const { id } = await replaced(to, '8.000000', () => ({
        to: usdc,
        gas: 120_000n,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, 2_000_000n] }),
      }));
      const held = await balance(c, accountId, 'USDC');
      await anvil('evm_setAutomine', [true]);
      await chain.mine(CONFIRMATIONS + 1);
      // Neither answer is true (2 of the 8 left): the payout waits for an operator, visible with its reason.
      const answers = await eventually(
        () => payoutAnswers(id),
        (all) => all.some((a) => a.reason?.includes('an operator')),
        30000,
      );
      expect(answers.at(-1)?.status).to.equal('PENDING');
      expect((await getOp(c, id)).currentState.status).to.equal('PROCESSING');
      expect(await balance(c, accountId, 'USDC')).to.deep.equal(held);
    });
  });

  it('a burst of concurrent withdrawals goes out on consecutive nonces, each paid once', async () => {
    const targets = Array.from({ length: 8 }, () => freshAddress());
    const ids = await Promise.all(targets.map((to) => withdraw(to, '1.000000')));
    const done = await Promise.all(ids.map((id) => untilSettled(id, 60000)));
    expect(done.map((op) => op.currentState.status)).to.deep.equal(ids.map(() => 'COMPLETED'));
    const nonces = await Promise.all(
      ids.map(async (id) => (await chain.clients.public.getTransaction({ hash: await endToEnd(id) })).nonce),
    );
    const sorted = [...nonces].sort((a, b) => a - b);
    expect(sorted).to.deep.equal(sorted.map((_, i) => sorted[0] + i));
    for (const to of targets) expect(await tokenBalance('USDC', to)).to.equal(1_000_000n);
    // Each nonce is what the hot wallet's workflow answered that withdrawal's update.
    const { byTransfer } = await hotWalletUpdates();
    expect(ids.map((id) => byTransfer.get(`payout:${payoutIdFor(id)}`))).to.deep.equal(nonces);
  });

  it('a worker killed between broadcast and receipt: after a restart the same bytes, COMPLETED once', async () => {
    const to = freshAddress();
    const before = await balance(c, accountId, 'USDC');
    const { services } = await stack();
    await anvil('evm_setAutomine', [false]);
    let id: string;
    try {
      id = await withdraw(to, '7.000000');
      const rowId = `payout:${payoutIdFor(id)}`;
      const stored = async () =>
        (await systemEm(services.orm).execute(`select hash, nonce from crypto_outgoing_txs where id = ?`, [rowId]))[0];
      const sent = await eventually(stored, (row) => !!row?.hash, 20000);
      // Broadcast (in the node's pool), no receipt yet: the worker dies there.
      await eventually(
        () => chain.clients.public.getTransaction({ hash: sent.hash }).catch(() => undefined),
        (tx) => !!tx,
        20000,
      );
      await kill(worker);
      await anvil('evm_setAutomine', [true]);
      await chain.mine(1);
      worker = await spawnWorker('crypto-payouts-worker-2', taskQueue, { env: workerEnv });
      const done = await untilSettled(id, 90000);
      expect(done.currentState.status).to.equal('COMPLETED');
      expect(await endToEnd(id)).to.equal(sent.hash);
      expect(await stored()).to.deep.equal(sent);
    } finally {
      await anvil('evm_setAutomine', [true]);
    }
    await chain.mine(3);
    expect(await tokenBalance('USDC', to)).to.equal(7_000_000n);
    expect((await balance(c, accountId, 'USDC')).total).to.equal((Number(before.total) - 7).toFixed(6));
  });

  // The deposits' inbound CRYPTO payments are another branch's: the return is driven on the connector, as the
  // railReturnPayment/railFollowReturn activities call it, with a received transfer's rail reference.
  it('returns a received transfer to the address it came from, once, through the connector', async () => {
    const { services } = await stack();
    const queues = { taskQueue, railsTaskQueue: `${taskQueue}-rails` };
    const connector = new CryptoRail(cryptoConfig, railStores(services.orm, services.temporal, queues));
    const somewhere = freshAddress();
    const hash = await chain.transfer({ token: 'USDC', to: somewhere, amount: '4.5', from: 2 });
    const log = (await chain.clients.public.getTransactionReceipt({ hash })).logs[0];
    const request = {
      endToEndId: `${chain.chainId}:${hash}:${log.logIndex}`,
      returnId: `rt${randomUUID().replace(/-/g, '')}`,
      amount: '4.500000',
    };
    const payer = chain.payers[2];
    const before = await tokenBalance('USDC', payer);
    let state = await connector.returns!.returnPayment(request);
    for (let i = 0; state.status === 'PENDING' && i < 50; i++) {
      await chain.mine(1);
      state = await connector.returns!.followReturn(request);
    }
    expect(state.status).to.equal('RETURNED');
    expect(state.endToEndId).to.match(/^0x[0-9a-f]{64}$/);
    expect(await connector.returns!.returnPayment(request)).to.deep.equal(state);
    expect((await tokenBalance('USDC', payer)) - before).to.equal(4_500_000n);
  });

  it('hot wallet workflow runs of three, its worker killed mid-burst: consecutive nonces, each paid once', async () => {
    const { services } = await stack();
    const workflowId = hotWalletWorkflowId(taskQueue, chain.chainId, chain.hotWallet.address);
    // The wallet's workflow, idle after the tests above, ended and started again with runs of three requests: the
    // burst below goes through at least three runs, each continuing as new with requests in flight.
    await services.temporal.workflow.getHandle(workflowId).terminate('a test asks for short runs');
    const shortRuns = await services.temporal.workflow.start<typeof hotWalletWorkflow>('hotWalletWorkflow', {
      workflowId,
      taskQueue,
      args: [
        {
          chainId: chain.chainId,
          wallet: chain.hotWallet.address,
          railsTaskQueue: `${taskQueue}-rails`,
          requestsPerRun: 3,
        },
      ],
    });
    const firstNonce = await chain.clients.public.getTransactionCount({ address: chain.hotWallet.address });
    const targets = Array.from({ length: 8 }, () => freshAddress());
    const ids = await Promise.all(targets.map((to) => withdraw(to, '1.000000')));
    const rowIds = ids.map((id) => `payout:${payoutIdFor(id)}`);
    const given = async () =>
      Number(
        (
          await systemEm(services.orm).execute(
            `select count(*)::int as n from crypto_outgoing_txs where id in (${rowIds.map(() => '?').join(',')})`,
            rowIds,
          )
        )[0].n,
      );
    // The first nonce given, the others still to come: the worker (the workflow's and the payouts') dies there.
    await eventually(given, (n) => n >= 1, 30000, 10);
    await kill(worker);
    const givenAtKill = await given();
    worker = await spawnWorker('crypto-payouts-worker-3', taskQueue, { env: workerEnv });
    const done = await Promise.all(ids.map((id) => untilSettled(id, 90000)));
    expect(done.map((op) => op.currentState.status)).to.deep.equal(ids.map(() => 'COMPLETED'));
    expect(givenAtKill, 'the kill came with nonces still to give').to.be.below(ids.length);
    const nonces = await Promise.all(
      ids.map(async (id) => (await chain.clients.public.getTransaction({ hash: await endToEnd(id) })).nonce),
    );
    expect([...nonces].sort((a, b) => a - b)).to.deep.equal(ids.map((_, i) => firstNonce + i));
    for (const to of targets) expect(await tokenBalance('USDC', to)).to.equal(1_000_000n);
    const { byTransfer, histories } = await hotWalletUpdates(shortRuns.firstExecutionRunId);
    expect(rowIds.map((id) => byTransfer.get(id))).to.deep.equal(nonces);
    expect(histories.length).to.be.at.least(3);
    // Deterministic: each run, its queue, its refusals and its continue-as-new, replays on the current code.
    for (const history of histories) await replayOnCurrentCode(history, workflowId);
  });

  it('a request whose row the database refuses fails alone; the others waiting with it get their nonces', async () => {
    const { services } = await stack();
    // A wallet of its own (its own workflow and rows), so the real hot wallet's nonces stay untouched.
    const wallet = freshAddress();
    const writer = temporalNonceWriter(services.temporal, { taskQueue, railsTaskQueue: `${taskQueue}-rails` });
    const txs = Array.from({ length: 5 }, (_, i) => ({
      id: `test:${randomUUID()}`,
      chainId: chain.chainId,
      wallet,
      token: chain.tokens.USDC,
      recipient: freshAddress(),
      // Not a number: Postgres refuses the row (22P02), as it would a bug's.
      units: i === 2 ? 'not-a-number' : '1000000',
    }));
    const outcomes = await Promise.allSettled(txs.map((tx) => writer.nonceFor(tx, 7)));
    const refused = outcomes[2];
    expect(refused.status).to.equal('rejected');
    const failure = refused.status === 'rejected' ? refused.reason : undefined;
    expect(failure).to.be.instanceOf(WorkflowUpdateFailedError);
    expect((failure as WorkflowUpdateFailedError).cause).to.include({ type: 'HOT_WALLET_NONCE_REFUSED' });
    const given = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.nonce] : []));
    expect([...given].sort((a, b) => a - b)).to.deep.equal([7, 8, 9, 10]);
    expect(await outgoingNonces(systemEm(services.orm), chain.chainId, wallet)).to.deep.equal([7, 8, 9, 10]);
    // Asked again, a transfer that has its nonce gets the same one (its update's answer, the same run).
    expect((await writer.nonceFor(txs[4], 0)).nonce).to.equal(given[3]);
    // Requests waiting together went in one activity: fewer activities than requests, each request in one.
    const workflowId = hotWalletWorkflowId(taskQueue, chain.chainId, wallet);
    const history = await services.temporal.workflow.getHandle(workflowId).fetchHistory();
    const batches = (history.events ?? []).flatMap((e) => {
      const input = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0];
      return input ? [defaultPayloadConverter.fromPayload<unknown[]>(input as Payload).length] : [];
    });
    expect(batches.reduce((a, b) => a + b, 0)).to.equal(txs.length);
    expect(batches.length).to.be.below(txs.length);
  });

  // An attempt asked for its nonce and timed out while the request waited at the wallet's workflow; the retry's
  // checks refused the transfer for good (a worker whose settings changed, a node that lost the receipt a return names)
  // and its withdrawal or return failed. The waiting request must not take a nonce then: nothing would sign or send
  // it, and every later transfer of the wallet would wait behind it on the chain (decision 0344).
  it('a transfer refused before its nonce never gets one later; one given its nonce first is followed', async () => {
    const { services } = await stack();
    const em = systemEm(services.orm);
    const wallet = freshAddress();
    const writer = temporalNonceWriter(services.temporal, { taskQueue, railsTaskQueue: `${taskQueue}-rails` });
    const tx = () => ({
      id: `test:${randomUUID()}`,
      chainId: chain.chainId,
      wallet,
      token: chain.tokens.USDC,
      recipient: freshAddress(),
      units: '1000000',
    });
    const [refusedFirst, next, givenFirst] = [tx(), tx(), tx()];
    expect(await refuseOutgoingUnordered(em, refusedFirst.id, 'not configured')).to.equal(undefined);
    const late = await writer.nonceFor(refusedFirst, 5).catch((e: unknown) => e);
    expect(late).to.be.instanceOf(WorkflowUpdateFailedError);
    expect((late as WorkflowUpdateFailedError).cause).to.include({ type: 'HOT_WALLET_NONCE_REFUSED' });
    expect((await writer.nonceFor(next, 5)).nonce, 'the refused transfer took no nonce').to.equal(5);
    const given = await writer.nonceFor(givenFirst, 5);
    expect(given.nonce).to.equal(6);
    const followed = await refuseOutgoingUnordered(em, givenFirst.id, 'not configured');
    expect(followed).to.deep.include({ id: givenFirst.id, nonce: 6 });
    expect(await outgoingNonces(em, chain.chainId, wallet)).to.deep.equal([5, 6]);
  });

  /**
   * The nonce each update of the hot wallet's workflow answered, by transfer id, over its run `runId` (the current
   * one by default) and every run it continued as new into; and the history of each of those runs.
   */
  async function hotWalletUpdates(runId?: string) {
    const { services } = await stack();
    const workflowId = hotWalletWorkflowId(taskQueue, chain.chainId, chain.hotWallet.address);
    const byTransfer = new Map<string, number>();
    const histories: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>[] = [];
    let next: string | undefined = runId ?? (await services.temporal.workflow.getHandle(workflowId).describe()).runId;
    while (next) {
      const history = await services.temporal.workflow.getHandle(workflowId, next).fetchHistory();
      histories.push(history);
      next = undefined;
      for (const event of history.events ?? []) {
        const completed = event.workflowExecutionUpdateCompletedEventAttributes;
        const answer = completed?.outcome?.success?.payloads?.[0];
        if (completed?.meta?.updateId && answer) {
          const tx = defaultPayloadConverter.fromPayload<OutgoingTx>(answer as Payload);
          byTransfer.set(completed.meta.updateId, tx.nonce);
        }
        next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? next;
      }
    }
    return { byTransfer, histories };
  }

  // Raw anvil calls the helper has no words for.
  function anvil(method: string, params: unknown[]) {
    return chain.clients.public.request({ method, params } as never);
  }

  /** Sets `holder`'s balance in a SandboxToken (balanceOf is its storage slot 3). */
  async function setTokenBalance(token: `0x${string}`, holder: `0x${string}`, units: bigint) {
    const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [holder, 3n]));
    const value = `0x${units.toString(16).padStart(64, '0')}`;
    await anvil('anvil_setStorageAt', [token, slot, value]);
  }
});

const swapCase = (ch: string) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase());

/** The address with the case of its first letter flipped: a wrong EIP-55 checksum. */
function flipFirstLetter(address: string): string {
  const i = [...address].findIndex((ch, k) => k > 1 && /[a-fA-F]/.test(ch));
  return address.slice(0, i) + swapCase(address[i]) + address.slice(i + 1);
}
