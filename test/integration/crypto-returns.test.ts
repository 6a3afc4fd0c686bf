// `cambio payment return` on an UNMATCHED CRYPTO payment (../shared/spec/decisions.md, "Crypto: stablecoins on a real
// chain (EVM)"): the money goes back the way it came, one ERC-20 transfer of the same token from the hot wallet to
// the address that sent it, stored before it is broadcast; RETURNED with that transaction's hash as the return's
// end-to-end id once it has EVM_CONFIRMATIONS. A second run of the command (an operator's retry) sends nothing more.
// Driven as an operator does: the scanner (a worker process of this file's own) records the payment, the CLI (a
// process with the chain's settings) returns it.
import { expect } from 'chai';
import { getAddress, parseAbiItem, zeroAddress } from 'viem';
import { mint } from '../../sandbox-chain/tokens';
import { cambioFailsWith, cambioWith } from '../helpers/cli';
import { cryptoStack, type CryptoStack } from '../helpers/crypto-stack';
import { assertLedgerBalanced, balance, getOp, untilStatus } from '../helpers/money';
import { paymentsOf } from '../helpers/inbound-payments';
import { killAll } from '../helpers/processes';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';

const CONFIRMATIONS = 2;
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

interface Payment {
  id: string;
  status: string;
  endToEndId: string;
  amount: { value: string; asset: string };
  returned: { endToEndId: string | null; reason: string | null; failure: string | null } | null;
}

describe('cambio payment return of a CRYPTO payment: back to the address it came from', function () {
  this.timeout(180_000);
  let cs: CryptoStack;

  before(async () => {
    cs = await cryptoStack({ confirmations: CONFIRMATIONS });
  });
  after(async () => {
    await killAll();
    await cs?.stop();
  });

  async function seen(c: TestCustomer, id: string): Promise<Payment> {
    const { http } = await stack();
    const res = await http.get(`/api/inbound-payments/${id}`).set(c.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  /** Scans until the transfer `hash` is recorded in the customer's suspense (mined deep enough first). */
  async function unmatched(c: TestCustomer, hash: string): Promise<Payment> {
    await cs.chain.mine(CONFIRMATIONS);
    const [payment] = await eventually(
      async () => {
        await cs.triggerScan();
        return paymentsOf(c, 'status[eq]=UNMATCHED');
      },
      (found) => found.some((p) => p.endToEndId.startsWith(`${cs.chain.chainId}:${hash}:`)),
      30_000,
      500,
    );
    return payment as unknown as Payment;
  }

  const returnCommand = (id: string) =>
    cambioWith(cs.cliEnv(), 'payment', 'return', id, '--reason', 'not a deposit of ours', '--json').then(
      (r) => JSON.parse(r.stdout) as Payment,
    );

  /** Mines a block at a time until the payment is no longer RETURNING (anvil mines only the transfer itself). */
  const untilReturned = (c: TestCustomer, id: string) =>
    eventually(
      async () => {
        await cs.chain.mine(1);
        return seen(c, id);
      },
      (p) => p.status !== 'RETURNING',
      60_000,
      300,
    );

  /** The scanner's reference of the (one-log) transfer `hash`: `{chainId}:{txHash}:{logIndex}`. */
  const referenceOf = async (hash: `0x${string}`) => {
    const { logs } = await cs.chain.clients.public.getTransactionReceipt({ hash });
    return `${cs.chain.chainId}:${hash}:${logs[0].logIndex}`;
  };

  /** Mines the confirmations, then scans until the deposit is COMPLETED. */
  const scannedUntilCompleted = async (c: TestCustomer, depositId: string) => {
    await cs.chain.mine(CONFIRMATIONS);
    await eventually(
      async () => {
        await cs.triggerScan();
        return (await getOp(c, depositId)).currentState.status;
      },
      (status) => status === 'COMPLETED',
      30_000,
      500,
    );
  };

  /** The hot wallet's transfers of `token` to `to` since block `from`, as the chain has them. */
  const hotWalletTransfers = (token: `0x${string}`, to: `0x${string}`, from: bigint) =>
    cs.chain.clients.public.getLogs({
      address: token,
      event: TRANSFER,
      args: { from: cs.chain.hotWallet.address, to },
      fromBlock: from,
      toBlock: 'latest',
    });

  it('sends another token back to its sender once, in that token; a retried command sends nothing', async () => {
    const c = await newCustomer('Crypto Return Ltda');
    const deposit = await cs.openDeposit(c, '3.00');
    const sender = cs.chain.payers[1];
    const usdt = cs.chain.tokens.USDT as `0x${string}`;
    const before = await cs.tokenBalance('USDT', sender);
    const start = await cs.chain.blockNumber();
    // USDT to the address of a USDC deposit: no deposit's money, the customer's suspense.
    const hash = await cs.chain.transfer({ token: 'USDT', to: deposit.walletAddress, amount: '3.25', from: 1 });
    const payment = await unmatched(c, hash);
    expect(payment.amount).to.deep.include({ value: '3.250000', asset: 'USDT' });
    expect(await cs.tokenBalance('USDT', sender)).to.equal(before - 3_250_000n);

    const asked = await returnCommand(payment.id);
    expect(asked).to.deep.include({ id: payment.id });
    expect(['RETURNING', 'RETURNED']).to.include(asked.status);
    // The operator, unsure the first run went through, runs it again: the return in flight is the same one.
    const again = await returnCommand(payment.id);
    expect(['RETURNING', 'RETURNED']).to.include(again.status);

    const done = await untilReturned(c, payment.id);
    expect(done.status).to.equal('RETURNED');
    const returnHash = done.returned!.endToEndId as `0x${string}`;
    expect(returnHash).to.match(/^0x[0-9a-f]{64}$/);
    expect(done.returned).to.deep.include({ reason: 'not a deposit of ours', failure: null });
    const receipt = await cs.chain.clients.public.getTransactionReceipt({ hash: returnHash });
    expect(receipt.status).to.equal('success');
    expect(getAddress(receipt.from)).to.equal(getAddress(cs.chain.hotWallet.address));
    expect(getAddress(receipt.to!)).to.equal(getAddress(usdt));

    // Once it is RETURNED, the command is refused and nothing more leaves, however many blocks follow.
    const refused = await cambioFailsWith(cs.cliEnv(), 'payment', 'return', payment.id, '--reason', 'again');
    expect(refused.body.code).to.equal('INVALID_STATE');
    await cs.chain.mine(CONFIRMATIONS + 2);
    await new Promise((r) => setTimeout(r, 1000));
    const sent = await hotWalletTransfers(usdt, sender, start);
    expect(sent.map((l) => [l.transactionHash, l.args.value])).to.deep.equal([[returnHash, 3_250_000n]]);
    expect(await cs.tokenBalance('USDT', sender)).to.equal(before);
    expect((await seen(c, payment.id)).status).to.equal('RETURNED');
    // The deposit's account was never credited; the suspense is empty again.
    expect((await balance(c, deposit.accountId, 'USDC')).total).to.equal('0.000000');
    await assertLedgerBalanced();
  });

  it('a transfer the scanner recorded, recorded again by an operator in capitals, is the same payment', async () => {
    const c = await newCustomer('Crypto Capitals Ltda');
    const deposit = await cs.openDeposit(c, '2.00');
    const hash = await cs.chain.transfer({ token: 'USDT', to: deposit.walletAddress, amount: '1.5', from: 1 });
    const payment = await unmatched(c, hash);
    // The same transaction as an explorer or a spreadsheet may show it: its hash in capitals, its log index padded.
    const [chainId, , logIndex] = payment.endToEndId.split(':');
    const typed = `${chainId}:0x${hash.slice(2).toUpperCase()}:0${logIndex}`;
    const args = ['--rail', 'CRYPTO', '--customer', c.customerId, '--amount', '1.50', '--asset', 'USDT'];
    const recorded = JSON.parse(
      (await cambioWith(cs.cliEnv(), 'payment', 'record', ...args, '--reference', typed, '--json')).stdout,
    ) as Payment;
    expect(recorded.id, 'one payment per transfer').to.equal(payment.id);
    expect(recorded.endToEndId).to.equal(payment.endToEndId);
    expect(await paymentsOf(c, 'status[eq]=UNMATCHED')).to.have.length(1);
    await assertLedgerBalanced();
  });

  it("refuses to record for one customer a transfer to another's deposit address: 409, the owner is paid", async () => {
    const owner = await newCustomer('Crypto Owner Ltda');
    const claimant = await newCustomer('Crypto Claimant Ltda');
    const deposit = await cs.openDeposit(owner, '4.00');
    const hash = await cs.chain.transfer({ token: 'USDC', to: deposit.walletAddress, amount: '4', from: 1 });
    // The claimant shows an operator the owner's transfer as his own, before the scanner has recorded it.
    const reference = await referenceOf(hash);
    const args = ['--rail', 'CRYPTO', '--customer', claimant.customerId, '--amount', '4.00', '--asset', 'USDC'];
    const refused = await cambioFailsWith(cs.cliEnv(), 'payment', 'record', ...args, '--reference', reference);
    expect(refused.body.code, JSON.stringify(refused.body)).to.equal('RAIL_REFERENCE_IN_USE');
    expect(await paymentsOf(claimant, 'status[eq]=UNMATCHED')).to.have.length(0);
    await scannedUntilCompleted(owner, deposit.id);
    expect((await balance(owner, deposit.accountId, 'USDC')).total).to.equal('4.000000');
    await assertLedgerBalanced();
  });

  it('refuses `deposit pay` of a CRYPTO deposit, whose transfer the scanner records: nothing recorded', async () => {
    const c = await newCustomer('Crypto Deposit Pay Ltda');
    const deposit = await cs.openDeposit(c, '3.00');
    const hash = await cs.chain.transfer({ token: 'USDC', to: deposit.walletAddress, amount: '3', from: 1 });
    // The operator reports it by hand under the transaction's hash, without its 0x (the reference form cannot be
    // typed here): the scanner would record the same transfer again under its own reference.
    const args = ['deposit', 'pay', deposit.id, '--amount', '3.00', '--asset', 'USDC', '--end-to-end', hash.slice(2)];
    const refused = await cambioFailsWith(cs.cliEnv(), ...args);
    expect(refused.body.code, JSON.stringify(refused.body)).to.equal('VALIDATION_ERROR');
    expect(refused.body.message).to.include('cambio payment record --rail CRYPTO');
    expect(await paymentsOf(c, `operationId[eq]=${deposit.id}`)).to.have.length(0);
    await scannedUntilCompleted(c, deposit.id);
    expect(await paymentsOf(c, `operationId[eq]=${deposit.id}`)).to.have.length(1);
    expect((await balance(c, deposit.accountId, 'USDC')).total).to.equal('3.000000');
    await assertLedgerBalanced();
  });

  it('refuses to record a transfer fewer than EVM_CONFIRMATIONS blocks deep: 409, recorded once it is', async () => {
    const c = await newCustomer('Crypto Shallow Ltda');
    const deposit = await cs.openDeposit(c, '3.00');
    const hash = await cs.chain.transfer({ token: 'USDC', to: deposit.walletAddress, amount: '3', from: 1 });
    const reference = await referenceOf(hash);
    // The customer shows an operator its transfer one block deep: a reorganisation may still take it away.
    const args = ['--rail', 'CRYPTO', '--operation', deposit.id, '--amount', '3.00', '--asset', 'USDC'];
    args.push('--reference', reference);
    const early = await cambioFailsWith(cs.cliEnv(), 'payment', 'record', ...args);
    expect(early.body.code, JSON.stringify(early.body)).to.equal('INVALID_STATE');
    expect(early.body.details).to.deep.include({ confirmations: 1, required: CONFIRMATIONS });
    expect((await getOp(c, deposit.id)).currentState.status).to.equal('REQUESTED');
    expect(await paymentsOf(c, `operationId[eq]=${deposit.id}`)).to.have.length(0);
    await cs.chain.mine(CONFIRMATIONS);
    await cambioWith(cs.cliEnv(), 'payment', 'record', ...args);
    await untilStatus(c, deposit.id, 'COMPLETED');
    await cs.triggerScan();
    expect(await paymentsOf(c, `operationId[eq]=${deposit.id}`)).to.have.length(1);
    expect((await balance(c, deposit.accountId, 'USDC')).total).to.equal('3.000000');
    await assertLedgerBalanced();
  });

  it("returns a transfer that came after the deposit's window, from the address that sent it", async () => {
    const c = await newCustomer('Crypto Late Ltda');
    const deposit = await cs.openDeposit(c, '2.00');
    // Paid in full, then paid again: the second transfer finds the deposit COMPLETED and is nobody's.
    await cs.chain.transfer({ token: 'USDC', to: deposit.walletAddress, amount: '2', from: 2 });
    await scannedUntilCompleted(c, deposit.id);
    const sender = cs.chain.payers[3];
    const before = await cs.tokenBalance('USDC', sender);
    const usdc = cs.chain.tokens.USDC as `0x${string}`;
    const start = await cs.chain.blockNumber();
    const late = await cs.chain.transfer({ token: 'USDC', to: deposit.walletAddress, amount: '2', from: 3 });
    const payment = await unmatched(c, late);
    await returnCommand(payment.id);
    const done = await untilReturned(c, payment.id);
    expect(done.status).to.equal('RETURNED');
    const sent = await hotWalletTransfers(usdc, sender, start);
    expect(sent.map((l) => [l.transactionHash, l.args.value])).to.deep.equal([[done.returned!.endToEndId, 2_000_000n]]);
    expect(await cs.tokenBalance('USDC', sender)).to.equal(before);
    expect((await balance(c, deposit.accountId, 'USDC')).total).to.equal('2.000000');
    await assertLedgerBalanced();
  });

  it('refuses to return a transfer from no address (a mint): nothing sent, UNMATCHED with the reason', async () => {
    const c = await newCustomer('Crypto Mint Ltda');
    const deposit = await cs.openDeposit(c, '4.00');
    const usdt = cs.chain.tokens.USDT as `0x${string}`;
    const start = await cs.chain.blockNumber();
    // USDT minted straight to a USDC deposit's address: its Transfer log comes from the zero address.
    await mint(cs.chain.clients, usdt, deposit.walletAddress, 4_000_000n);
    const [log] = await cs.chain.clients.public.getLogs({
      address: usdt,
      event: TRANSFER,
      args: { to: deposit.walletAddress },
      fromBlock: start,
      toBlock: 'latest',
    });
    const payment = await unmatched(c, log.transactionHash!);
    const hotStock = await cs.tokenBalance('USDT', cs.chain.hotWallet.address);
    const hotNonce = await cs.chain.clients.public.getTransactionCount({ address: cs.chain.hotWallet.address });

    await returnCommand(payment.id);
    const done = await untilReturned(c, payment.id);
    expect(done.status).to.equal('UNMATCHED');
    expect(done.returned?.failure ?? '').to.match(/zero address|no address/);
    await cs.chain.mine(CONFIRMATIONS + 1);
    expect(await hotWalletTransfers(usdt, zeroAddress, start)).to.have.length(0);
    expect(await cs.tokenBalance('USDT', cs.chain.hotWallet.address)).to.equal(hotStock);
    expect(await cs.chain.clients.public.getTransactionCount({ address: cs.chain.hotWallet.address })).to.equal(
      hotNonce,
    );
    await assertLedgerBalanced();
  });

  it('refuses to record a transfer as an amount or token the chain does not show: 400, nothing recorded', async () => {
    const c = await newCustomer('Crypto Typed Ltda');
    // 3 USDT the chain shows; the operator types 30.00, then USDC, when recording it from the explorer.
    const hash = await cs.chain.transfer({ token: 'USDT', to: cs.chain.payers[2], amount: '3', from: 1 });
    const reference = await referenceOf(hash);
    await cs.chain.mine(CONFIRMATIONS);
    const record = (amount: string, asset: string) =>
      [
        'payment',
        'record',
        '--rail',
        'CRYPTO',
        '--customer',
        c.customerId,
        '--amount',
        amount,
        '--asset',
        asset,
      ].concat('--reference', reference);
    for (const [amount, asset, path] of [
      ['30.00', 'USDT', '--amount'],
      ['3.00', 'USDC', '--asset'],
    ]) {
      const refused = await cambioFailsWith(cs.cliEnv(), ...record(amount, asset));
      expect(refused.body.code, JSON.stringify(refused.body)).to.equal('VALIDATION_ERROR');
      expect(refused.body.details.errors.map((e: { path: string }) => e.path)).to.deep.equal([path]);
      expect(refused.body.details.onChain).to.deep.equal({ asset: 'USDT', amount: '3.000000' });
    }
    expect(await paymentsOf(c, 'status[eq]=UNMATCHED'), 'nothing recorded').to.have.length(0);
    const recorded = JSON.parse((await cambioWith(cs.cliEnv(), ...record('3', 'USDT'), '--json')).stdout) as Payment;
    expect([recorded.status, recorded.amount], JSON.stringify(recorded)).to.deep.equal([
      'UNMATCHED',
      { value: '3.000000', asset: 'USDT', decimals: 6 },
    ]);
    await assertLedgerBalanced();
  });

  it('refuses to send back more than the transfer an operator named carried: nothing sent, UNMATCHED', async () => {
    const c = await newCustomer('Crypto Typo Ltda');
    const sender = cs.chain.payers[1];
    const usdt = cs.chain.tokens.USDT as `0x${string}`;
    const start = await cs.chain.blockNumber();
    // 3 USDT the chain shows; the operator types 30.00 when recording it from the explorer, on a CLI without the
    // chain's node, which records as typed (decision 0293); the return reads the chain and finds 3.
    const hash = await cs.chain.transfer({ token: 'USDT', to: cs.chain.payers[2], amount: '3', from: 1 });
    const reference = await referenceOf(hash);
    await cs.chain.mine(CONFIRMATIONS);
    const withoutNode = Object.fromEntries(Object.entries(cs.cliEnv()).filter(([k]) => !k.startsWith('EVM_')));
    const args = ['--rail', 'CRYPTO', '--customer', c.customerId, '--amount', '30.00', '--asset', 'USDT'];
    const recorded = JSON.parse(
      (await cambioWith(withoutNode, 'payment', 'record', ...args, '--reference', reference, '--json')).stdout,
    );
    expect(recorded.status).to.equal('UNMATCHED');
    const hotNonce = await cs.chain.clients.public.getTransactionCount({ address: cs.chain.hotWallet.address });

    await returnCommand(recorded.id);
    const done = await untilReturned(c, recorded.id);
    expect(done.status).to.equal('UNMATCHED');
    expect(done.returned?.failure ?? '').to.match(/carried/);
    await cs.chain.mine(CONFIRMATIONS + 1);
    expect(await hotWalletTransfers(usdt, sender, start)).to.have.length(0);
    expect(await cs.chain.clients.public.getTransactionCount({ address: cs.chain.hotWallet.address })).to.equal(
      hotNonce,
    );
    await assertLedgerBalanced();
  });
});
