// CRYPTO deposits on a real chain (anvil): a fresh address per deposit, transfers found by the scanner, PENDING until
// EVM_CONFIRMATIONS, then credited exactly as a PIX is, or DROPPED when a reorganisation took their block away.
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { systemEm, tenantEm } from '../../db/orm';
import { recordSeenTransfers } from '../../db/repositories/crypto-deposits';
import { inTransaction } from '../../db/transaction';
import { openDeposit } from '../../services/operations/deposit';
import type { ServiceContext } from '../../services/context';
import { CryptoRail } from '../../rails/crypto';
import { Rails } from '../../rails/registry';
import { RAIL_ENTRIES } from '../../rails/registry';
import type { TestChain } from '../helpers/chain';
import { cryptoScanner, type CryptoScanner, type ScannerDeposit } from '../helpers/crypto-scanner';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, quote, untilStatus } from '../helpers/money';
import { paymentsOf } from '../helpers/inbound-payments';
import { exitWithin, killAll, spawnWorker } from '../helpers/processes';
import { newCustomer, stack, type TestCustomer } from '../helpers/stack';

const CONFIRMATIONS = 3;

describe('CRYPTO deposits on a real chain', function () {
  this.timeout(120_000);
  let scanner: CryptoScanner;
  let chain: TestChain;
  let rail: CryptoRail;
  let s: ServiceContext;
  let chainId: number;

  before(async () => {
    scanner = await cryptoScanner({ chainIdBase: 31_000, confirmations: CONFIRMATIONS, maxBlockRange: 5 });
    ({ chain, rail, services: s, chainId } = scanner);
  });
  // The wrong-chain worker exits by itself; if it hangs instead, it must not outlive this file.
  after(killAll);
  after(async () => chain?.stop());

  const scan = (via?: CryptoRail) => scanner.scan(via);
  const cryptoDeposit = (c: TestCustomer, value: string) => scanner.deposit(c, value);

  it('gives each deposit its own EIP-55 address, and credits a transfer once it is confirmed', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const { op, account, instruction } = await cryptoDeposit(c, '25.00');
    expect(instruction).to.include({ rail: 'CRYPTO', network: 'ETHEREUM', asset: 'USDC', amount: '25.000000' });
    expect(instruction.tokenContract.toLowerCase()).to.equal(chain.tokens.USDC.toLowerCase());
    expect(instruction.walletAddress)
      .to.match(/^0x[0-9a-fA-F]{40}$/)
      .and.not.equal(instruction.walletAddress.toLowerCase());
    const shown = await http.get(`/api/operations/${op.id}`).set(c.auth);
    expect(shown.body.intent.fundingInstruction.walletAddress).to.equal(instruction.walletAddress);
    const other = await cryptoDeposit(c, '1.00');
    expect(other.instruction.walletAddress).to.not.equal(instruction.walletAddress);

    const hash = await chain.transfer({ token: 'USDC', to: instruction.walletAddress as `0x${string}`, amount: '25' });
    await scan();
    const [pending] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(pending).to.include({ status: 'PENDING' });
    expect(pending.endToEndId).to.match(new RegExp(`^${chainId}:${hash}:\\d+$`));
    expect((pending as any).chain.confirmations).to.equal(1);
    expect((await balance(c, account.id, 'USDC')).total).to.equal('0.000000');

    await chain.mine(CONFIRMATIONS - 1);
    await scan();
    await untilStatus(c, op.id, 'COMPLETED');
    const [matched] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(matched).to.include({ status: 'MATCHED' });
    expect((await balance(c, account.id, 'USDC')).total).to.equal('25.000000');
    // Scanning again (an overlapping or repeated run) records nothing twice.
    await scan();
    expect(await paymentsOf(c, `operationId[eq]=${op.id}`)).to.have.length(1);
    await assertLedgerBalanced();
  });

  it('drops a transfer whose block a reorganisation took away, and credits nothing', async () => {
    const c = await newCustomer();
    const { op, account, instruction } = await cryptoDeposit(c, '10.00');
    await chain.transfer({ token: 'USDC', to: instruction.walletAddress as `0x${string}`, amount: '10' });
    await scan();
    expect((await paymentsOf(c, `operationId[eq]=${op.id}`))[0]).to.include({ status: 'PENDING' });
    // The transfer's block and the one after are replaced by empty ones: the transfer is gone from the chain.
    await chain.reorg(1);
    await chain.mine(CONFIRMATIONS);
    await scan();
    const [dropped] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(dropped).to.include({ status: 'DROPPED' });
    expect((await balance(c, account.id, 'USDC')).total).to.equal('0.000000');
    await assertLedgerBalanced();
  });

  it('credits a transfer a reorg moved to a later block while no scan ran for longer than the tail', async () => {
    const c = await newCustomer();
    const { op, account, address } = await cryptoDeposit(c, '9.00');
    const hash = await chain.transfer({ token: 'USDC', to: address, amount: '9' });
    await scan();
    await chain.mine(1);
    await scan(); // the cursor is now past the block after the transfer's
    expect((await paymentsOf(c, `operationId[eq]=${op.id}`))[0]).to.include({ status: 'PENDING' });
    // The transfer's block and the next are replaced; the same transaction is mined again in the second of them.
    await chain.reorg(2, [{ hash, offset: 1 }]);
    const moved = await chain.clients.public.getTransactionReceipt({ hash });
    // The scanner is down (a worker or node outage) while the chain goes past its rescanned tail.
    await chain.mine(CONFIRMATIONS + 3);
    expect((await chain.blockNumber()) > moved.blockNumber + BigInt(CONFIRMATIONS)).to.equal(true);
    await scan();
    await untilStatus(c, op.id, 'COMPLETED');
    const [paid] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(paid).to.include({ status: 'MATCHED' });
    expect((paid as any).chain.blockNumber).to.equal(String(moved.blockNumber));
    expect((await balance(c, account.id, 'USDC')).total).to.equal('9.000000');
    await assertLedgerBalanced();
  });

  it('credits a transfer a reorg moved to an earlier block while no scan ran for longer than the tail', async () => {
    const c = await newCustomer();
    const { op, account, address } = await cryptoDeposit(c, '11.00');
    await chain.mine(1);
    const hash = await chain.transfer({ token: 'USDC', to: address, amount: '11' });
    const seen = await chain.clients.public.getTransactionReceipt({ hash });
    await scan();
    expect((await paymentsOf(c, `operationId[eq]=${op.id}`))[0]).to.include({ status: 'PENDING' });
    // The block before the transfer's and the transfer's own are replaced (a reorg shallower than the confirmations);
    // the new chain mines the same transaction in the first of them, one block earlier than it was seen.
    await chain.reorg(2, [{ hash, offset: 0 }]);
    const moved = await chain.clients.public.getTransactionReceipt({ hash });
    expect(moved.blockNumber).to.equal(seen.blockNumber - 1n);
    // The scanner is down while the chain goes past its rescanned tail.
    await chain.mine(CONFIRMATIONS + 3);
    await scan();
    await untilStatus(c, op.id, 'COMPLETED');
    const [paid] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(paid).to.include({ status: 'MATCHED' });
    expect((paid as any).chain.blockNumber).to.equal(String(moved.blockNumber));
    expect((await balance(c, account.id, 'USDC')).total).to.equal('11.000000');
    await assertLedgerBalanced();
  });

  // A log's index counts the logs of its whole block: a reorganisation that mines a transaction again after another
  // shifts its logs, and one of its other logs can land on an index recorded already. The sandbox token moves one log
  // per transaction, so the scanner's records are written here as a scan of such a transaction writes them, on a
  // chain id no scan of this file reads.
  it('a reorg that puts another log of the transaction on a recorded index: the record becomes that log', async () => {
    const a = await newCustomer();
    const b = await newCustomer();
    const depA = await cryptoDeposit(a, '100.00');
    const depB = await cryptoDeposit(b, '50.00');
    const elsewhere = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    const tx = `0x${randomBytes(32).toString('hex')}`;
    const seen = (dep: ScannerDeposit, amount: string, logIndex: number, block: bigint, blockHash: string) => ({
      endToEndId: `${elsewhere}:${tx}:${logIndex}`,
      operationId: dep.op.id,
      customerId: dep.op.customerId,
      accountId: dep.account.id,
      asset: 'USDC',
      amount,
      tokenUnits: String(Number(amount) * 1_000_000),
      blockNumber: block,
      blockHash,
      confirmations: 1,
    });
    const record = (transfers: ReturnType<typeof seen>[], next: bigint) =>
      inTransaction(systemEm(s.orm), (em) => recordSeenTransfers(em, 'CRYPTO', elsewhere, transfers, next));
    const first = `0x${randomBytes(32).toString('hex')}`;
    const second = `0x${randomBytes(32).toString('hex')}`;
    // Logs 5 (100 to A) and 6 (50 to B); then, re-mined in another block after one more log, 6 and 7.
    await record([seen(depA, '100.00', 5, 40n, first), seen(depB, '50.00', 6, 40n, first)], 41n);
    await record([seen(depA, '100.00', 6, 41n, second), seen(depB, '50.00', 7, 41n, second)], 42n);
    const shown = async (c: TestCustomer, dep: ScannerDeposit) =>
      (await paymentsOf(c, `operationId[eq]=${dep.op.id}`))
        .map((p) => [p.endToEndId.split(':')[2], p.amount.value, p.chain?.blockHash])
        .sort();
    expect(await shown(a, depA)).to.deep.equal([
      ['5', '100.000000', first],
      ['6', '100.000000', second],
    ]);
    expect(await shown(b, depB), "B's 50 once, at its new index").to.deep.equal([['7', '50.000000', second]]);
  });

  it("credits a deposit paid long before the deployment's first scan ran", async () => {
    // A chain no scan of this deployment has read yet (its first start, or a move to another chain): the API hands
    // out deposit addresses while the worker's scans fail or have not started.
    const first = await cryptoScanner({ chainIdBase: 30_000, confirmations: CONFIRMATIONS, maxBlockRange: 5 });
    try {
      const c = await newCustomer();
      const { op, account, address } = await first.deposit(c, '12.00');
      await first.chain.transfer({ token: 'USDC', to: address, amount: '12' });
      // More blocks than one range of the scan go by before its first run.
      await first.chain.mine(20);
      await first.scan();
      await untilStatus(c, op.id, 'COMPLETED');
      expect((await balance(c, account.id, 'USDC')).total).to.equal('12.000000');
      await assertLedgerBalanced();
    } finally {
      await first.chain.stop();
    }
  });

  it('waits for a transfer seen in the window to confirm after it, and takes none first seen after it', async () => {
    const c = await newCustomer();
    // A window of 12 s: the deposits wait a quarter of it (3 s) after their window, the rail's wait capped (0322).
    const paid = await scanner.deposit(c, '13.00', 12);
    const unpaid = await scanner.deposit(c, '14.00', 12);
    await chain.transfer({ token: 'USDC', to: paid.address, amount: '13' });
    await scan();
    expect((await paymentsOf(c, `operationId[eq]=${paid.op.id}`))[0]).to.include({ status: 'PENDING' });
    const windowEnd = Date.parse(unpaid.instruction.expiresAt);
    await new Promise((resolve) => setTimeout(resolve, windowEnd + 300 - Date.now()));
    // After both windows: the first transfer confirms, a transfer to the second deposit is first seen.
    await chain.transfer({ token: 'USDC', to: unpaid.address, amount: '14' });
    await chain.mine(CONFIRMATIONS);
    await scan();
    await untilStatus(c, paid.op.id, 'COMPLETED');
    expect((await paymentsOf(c, `operationId[eq]=${paid.op.id}`))[0]).to.include({ status: 'MATCHED' });
    expect((await paymentsOf(c, `operationId[eq]=${unpaid.op.id}`))[0]).to.include({ status: 'UNMATCHED' });
    const failed = await untilStatus(c, unpaid.op.id, 'FAILED');
    expect(failed.currentState.reason).to.include({ code: 'DEPOSIT_EXPIRED' });
    expect((await balance(c, paid.account.id, 'USDC')).total).to.equal('13.000000');
    // The late transfer waits in the customer's suspense, on no account.
    expect((await balance(c, unpaid.account.id, 'USDC')).total).to.equal('0.000000');
  });

  it('leaves a short payment failing the deposit, and dust or another token in the suspense', async () => {
    const c = await newCustomer();
    const short = await cryptoDeposit(c, '5.00');
    await chain.transfer({ token: 'USDC', to: short.instruction.walletAddress as `0x${string}`, amount: '4' });
    const wrong = await cryptoDeposit(c, '3.00');
    await chain.transfer({ token: 'USDT', to: wrong.instruction.walletAddress as `0x${string}`, amount: '3' });
    await chain.mine(CONFIRMATIONS);
    await scan();
    await untilStatus(c, short.op.id, 'FAILED');
    const [unmatched] = await paymentsOf(c, 'status[eq]=UNMATCHED');
    expect(unmatched).to.include({ status: 'UNMATCHED' });
    expect(unmatched.amount.value).to.equal('3.000000');
    await assertLedgerBalanced();
  });

  it('catches up on many blocks of history in bounded ranges, each transfer once', async () => {
    const c = await newCustomer();
    const deposits = await Promise.all([1, 2, 3, 4].map(() => cryptoDeposit(c, '2.00')));
    for (const d of deposits) {
      await chain.transfer({ token: 'USDC', to: d.instruction.walletAddress as `0x${string}`, amount: '2' });
      await chain.mine(7);
    }
    await chain.mine(CONFIRMATIONS);
    // Two scans at once (a schedule run and a retry of the last one) record each transfer once.
    await Promise.all([scan(), scan()]);
    await scan();
    for (const d of deposits) await untilStatus(c, d.op.id, 'COMPLETED');
    const matched = await paymentsOf(c, 'status[eq]=MATCHED');
    expect(matched).to.have.length(4);
    await assertLedgerBalanced();
  });

  it('answers 503 with Retry-After while the node is down, and 422 outside sandbox without a node', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['USDC']);
    const open = async (services: ServiceContext) => {
      const q = await quote(c, { accountId: account.id, sourceAsset: 'USDC', targetAsset: 'USDC', sourceAmount: '1' });
      const body = { accountId: account.id, quoteId: q.id, fundingInstruction: { rail: 'CRYPTO' } };
      return openDeposit(services, tenantEm(s.orm, c.customerId), body, randomUUID()).then(
        () => expect.fail('the deposit was created'),
        (err) => err,
      );
    };
    const down = new CryptoRail({ ...rail.config, rpcUrl: 'http://127.0.0.1:9', timeoutMs: 500 });
    const unavailable = await open({ ...s, rails: new Rails(RAIL_ENTRIES, [down]) });
    expect(unavailable.code).to.equal('SERVICE_UNAVAILABLE');
    expect(unavailable.details.retryAfterSeconds).to.be.greaterThan(0);
    const production = { ...s.config, sandbox: false, crypto: { ...s.config.crypto, rpcUrl: undefined } };
    const refused = await open({ ...s, config: production, rails: new Rails(RAIL_ENTRIES, []) });
    expect(refused.code).to.equal('RAIL_NOT_CONFIGURED');
    const { http } = await stack();
    const listed = await http.get('/api/operations').query({ limit: 100 }).set(c.auth);
    expect(listed.body.data).to.have.length(0);
  });

  it('refuses to start a worker pointed at a node of another chain', async () => {
    const { config } = await stack();
    const worker = await spawnWorker('wrong-chain', `cambio-test-${randomUUID()}`, {
      pollers: 0,
      env: chain.env({ EVM_CHAIN_ID: String(chainId + 1), SANDBOX: 'true' }),
    });
    const exit = await exitWithin(worker, 30_000);
    expect(exit.code).to.equal(1);
    expect(worker.output()).to.match(new RegExp(`chain ${chainId}, not EVM_CHAIN_ID=${chainId + 1}`));
    expect(config.crypto.rpcUrl).to.equal(undefined);
  });
});
