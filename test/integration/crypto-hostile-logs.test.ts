// Transfer logs an attacker (or a careless token) can put on the chain, read by the CRYPTO deposit scanner: anyone may
// send a token transfer of zero units to any address, a contract of our own making may claim to be USDC, and a
// token's `value` is a uint256. None of them may fail a customer's deposit, credit anyone, or stop the scanner.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { concatHex, maxUint256, numberToHex, pad, toEventSelector, type Hex } from 'viem';
import { CryptoRail } from '../../rails/crypto';
import { mint, SANDBOX_TOKEN_ABI } from '../../sandbox-chain/tokens';
import { loadConfig } from '../../config';
import { startChain, type TestChain } from '../helpers/chain';
import { cryptoScanner, type CryptoScanner } from '../helpers/crypto-scanner';
import { assertLedgerBalanced, balance, getOp, untilStatus } from '../helpers/money';
import { paymentsOf } from '../helpers/inbound-payments';
import { newCustomer, type TestCustomer } from '../helpers/stack';

const CONFIRMATIONS = 2;

describe('CRYPTO deposits: hostile Transfer logs', function () {
  this.timeout(120_000);
  let scanner: CryptoScanner;
  let chain: TestChain;
  let rail: CryptoRail;

  before(async () => {
    scanner = await cryptoScanner({ chainIdBase: 32_000, confirmations: CONFIRMATIONS, maxBlockRange: 50 });
    ({ chain, rail } = scanner);
  });
  after(async () => chain?.stop());

  const scan = (via?: CryptoRail) => scanner.scan(via);
  const cryptoDeposit = (c: TestCustomer, value: string) => scanner.deposit(c, value);

  it('a transfer of zero units to a deposit address is no payment: it fails nothing, the real one pays', async () => {
    const c = await newCustomer();
    const { op, account, address } = await cryptoDeposit(c, '7.00');
    // Anyone can do this (address poisoning bots do it to every address that receives stablecoins), before the payer.
    await chain.transfer({ token: 'USDC', to: address, amount: 0n, from: 2 });
    await chain.mine(CONFIRMATIONS);
    await scan();
    expect(await paymentsOf(c, `operationId[eq]=${op.id}`)).to.have.length(0);
    expect(await paymentsOf(c, 'status[eq]=UNMATCHED')).to.have.length(0);
    expect((await getOp(c, op.id)).currentState.status).to.equal('REQUESTED');

    await chain.transfer({ token: 'USDC', to: address, amount: '7' });
    await chain.mine(CONFIRMATIONS);
    await scan();
    await untilStatus(c, op.id, 'COMPLETED');
    expect((await balance(c, account.id, 'USDC')).total).to.equal('7.000000');
    await assertLedgerBalanced();
  });

  it('a contract that only calls itself USDC is not read: nothing is recorded', async () => {
    const c = await newCustomer();
    const { op, address } = await cryptoDeposit(c, '4.00');
    const fake = await chain.deployToken('USDC', 6);
    await chain.transfer({ token: fake, to: address, amount: '4' });
    await chain.mine(CONFIRMATIONS);
    await scan();
    expect(await paymentsOf(c, `operationId[eq]=${op.id}`)).to.have.length(0);
    expect(await paymentsOf(c, 'status[eq]=UNMATCHED')).to.have.length(0);
    expect((await getOp(c, op.id)).currentState.status).to.equal('REQUESTED');
  });

  it('a uint256-max transfer of a listed token is recorded nowhere and does not stop the scanner', async () => {
    const c = await newCustomer();
    const poisoned = await cryptoDeposit(c, '5.00');
    // The sandbox token's mint emits Transfer(0x0, to, value) for any value the supply can still take: all of it.
    const supply = (await chain.clients.public.readContract({
      address: chain.tokens.USDC,
      abi: SANDBOX_TOKEN_ABI,
      functionName: 'totalSupply',
    })) as bigint;
    await mint(chain.clients, chain.tokens.USDC, poisoned.address, maxUint256 - supply);
    const honest = await cryptoDeposit(c, '6.00');
    await chain.transfer({ token: 'USDC', to: honest.address, amount: '6' });
    await chain.mine(CONFIRMATIONS);
    await scan();
    await untilStatus(c, honest.op.id, 'COMPLETED');
    expect(await paymentsOf(c, `operationId[eq]=${poisoned.op.id}`)).to.have.length(0);
    expect((await getOp(c, poisoned.op.id)).currentState.status).to.equal('REQUESTED');
    expect((await balance(c, honest.account.id, 'USDC')).total).to.equal('6.000000');
    expect((await balance(c, poisoned.account.id, 'USDC')).total).to.equal('0.000000');
    // The scanner goes on: a later run reads past it.
    const later = await scan();
    expect(later.fromBlock).to.not.equal(undefined);
    await assertLedgerBalanced();
  });

  it("a listed token's Transfer log in another shape is recorded nowhere and does not stop the scanner", async () => {
    const c = await newCustomer();
    const odd = await cryptoDeposit(c, '3.00');
    // The USDC contract's own address emits, for a moment, Transfer logs of other shapes than ERC-20's (3 topics, a
    // 32-byte value): no value at all (ERC-721's shape, or the data left empty), or a value cut short.
    const selector = toEventSelector('Transfer(address,address,uint256)');
    const word = (a: Hex) => pad(a, { size: 32 });
    const from = word(chain.payers[0]);
    const to = word(odd.address);
    await emitFromToken(chain.tokens.USDC, [
      { topics: [selector, from, to, word('0x07')], data: '0x' },
      { topics: [selector, from, to], data: '0x' },
      { topics: [selector, from, to], data: numberToHex(3_000_000n, { size: 16 }) },
    ]);
    const honest = await cryptoDeposit(c, '2.00');
    await chain.transfer({ token: 'USDC', to: honest.address, amount: '2' });
    await chain.mine(CONFIRMATIONS);
    const result = await scan();
    expect(result).to.have.property('misshapen').with.length(3);
    await untilStatus(c, honest.op.id, 'COMPLETED');
    expect((await balance(c, honest.account.id, 'USDC')).total).to.equal('2.000000');
    expect(await paymentsOf(c, `operationId[eq]=${odd.op.id}`)).to.have.length(0);
    expect(await paymentsOf(c, 'status[eq]=UNMATCHED')).to.have.length(0);
    expect((await getOp(c, odd.op.id)).currentState.status).to.equal('REQUESTED');
    await assertLedgerBalanced();
  });

  it("a node that does not show the transfer's block yet (a lagging backend) leaves it PENDING", async () => {
    // A JSON-RPC proxy in front of the chain that answers null for the `hidden` block (as a load-balanced
    // node does when the backend asked is behind the one that gave the head).
    let hidden: string | undefined;
    const proxy = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
        res.setHeader('content-type', 'application/json');
        if (call.method === 'eth_getBlockByNumber' && call.params[0] === hidden) {
          res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: null }));
          return;
        }
        void fetch(chain.url, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
          .then((upstream) => upstream.text())
          .then((text) => res.end(text));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as AddressInfo).port;
      const lagging = new CryptoRail({ ...rail.config, rpcUrl: `http://127.0.0.1:${port}` });
      const c = await newCustomer();
      const { op, account, address } = await cryptoDeposit(c, '8.00');
      const hash = await chain.transfer({ token: 'USDC', to: address, amount: '8' });
      const { blockNumber } = await chain.clients.public.getTransactionReceipt({ hash });
      await chain.mine(CONFIRMATIONS);
      hidden = `0x${blockNumber.toString(16)}`;
      await scan(lagging);
      const [waiting] = await paymentsOf(c, `operationId[eq]=${op.id}`);
      expect(waiting).to.include({ status: 'PENDING' });

      hidden = undefined;
      await scan(lagging);
      await untilStatus(c, op.id, 'COMPLETED');
      expect((await balance(c, account.id, 'USDC')).total).to.equal('8.000000');
    } finally {
      proxy.close();
    }
  });
  it("another chain's scan (the deployment moved, another file's) leaves this chain's pending transfers", async () => {
    const c = await newCustomer();
    const { op, account, address } = await cryptoDeposit(c, '9.00');
    await chain.transfer({ token: 'USDC', to: address, amount: '9' });
    await scan(); // seen one block deep of two: PENDING
    const [waiting] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(waiting).to.include({ status: 'PENDING' });
    expect(waiting.chain).to.include({ confirmations: 1 });
    // Another chain, taller than this one: its block at the transfer's height has another hash.
    const other = await startChain({ chainId: scanner.chainId + 1 });
    try {
      await other.mine(Number(await chain.clients.public.getBlockNumber()) + 5);
      const settings = { EVM_CONFIRMATIONS: String(CONFIRMATIONS), SANDBOX: 'true' };
      await scan(new CryptoRail(loadConfig({ ...process.env, ...other.env(settings) }).crypto));
    } finally {
      await other.stop();
    }
    const [after] = await paymentsOf(c, `operationId[eq]=${op.id}`);
    expect(after).to.include({ status: 'PENDING' });
    expect(after.chain).to.deep.equal(waiting.chain);
    // This chain's own scan confirms it: the deposit is paid.
    await chain.mine(CONFIRMATIONS);
    await scan();
    await untilStatus(c, op.id, 'COMPLETED');
    expect((await balance(c, account.id, 'USDC')).total).to.equal('9.000000');
  });

  /**
   * Puts, for the time of a few transactions, code at `token` that emits one log per call (each word of the call's
   * data up to `topics.length` a topic, the rest its data), then the token's own code back (its storage untouched).
   */
  async function emitFromToken(token: `0x${string}`, logs: { topics: Hex[]; data: Hex }[]): Promise<void> {
    const code = await chain.clients.public.getCode({ address: token });
    const { public: node, wallet, deployer } = chain.clients;
    try {
      for (const { topics, data } of logs) {
        await node.request({ method: 'anvil_setCode', params: [token, emitterCode(topics.length)] } as never);
        const hash = await wallet.sendTransaction({
          account: deployer,
          chain: wallet.chain,
          to: token,
          data: concatHex([...topics, data]),
          gas: 200_000n,
        });
        await node.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      }
    } finally {
      await node.request({ method: 'anvil_setCode', params: [token, code] } as never);
    }
  }
});

/** Runtime code: copies the call's data to memory and emits LOG{n} of its first n words and the rest as data. */
function emitterCode(n: number): Hex {
  // CALLDATASIZE PUSH1 0 PUSH1 0 CALLDATACOPY
  let code = '3660006000' + '37';
  // The topics, last first (LOGn takes offset, size, topic0, ..., topic n-1 from the top of the stack).
  for (let i = n - 1; i >= 0; i--) code += '60' + (i * 32).toString(16).padStart(2, '0') + '51'; // PUSH1 i*32 MLOAD
  const dataAt = (n * 32).toString(16).padStart(2, '0');
  code += '60' + dataAt + '36' + '03'; // PUSH1 n*32 CALLDATASIZE SUB: the data's size
  code += '60' + dataAt; // PUSH1 n*32: the data's offset
  code += (0xa0 + n).toString(16) + '00'; // LOGn STOP
  return `0x${code}`;
}
