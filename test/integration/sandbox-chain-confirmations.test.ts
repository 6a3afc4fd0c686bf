// The sandbox chain `npm start` runs (dist/sandbox-chain/main.js): anvil mines a block per transaction and none
// otherwise, so on a quiet chain a transaction never gained the EVM_CONFIRMATIONS blocks Cambio waits for, and a
// WALLET withdrawal stayed PROCESSING. The chain must confirm what it mines, and mine nothing while idle.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { chainClients } from '../../sandbox-chain/tokens';
import { freePort } from '../helpers/processes';
import { eventually } from '../helpers/stack';

const ROOT = path.resolve(__dirname, '../..');

describe('the sandbox chain of npm start', function () {
  this.timeout(90_000);
  let chain: ChildProcess | undefined;
  after(async () => {
    if (chain && chain.exitCode === null) {
      chain.kill('SIGTERM');
      await once(chain, 'exit');
    }
  });

  it('mines EVM_CONFIRMATIONS blocks after a block with transactions, and none while idle', async () => {
    const port = await freePort();
    chain = spawn(process.execPath, ['dist/sandbox-chain/main.js'], {
      cwd: ROOT,
      env: { ...process.env, SANDBOX_CHAIN_PORT: String(port), EVM_CHAIN_ID: '31337', EVM_CONFIRMATIONS: '5' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    chain.stderr!.resume();
    let out = '';
    chain.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const settings = await eventually(
      async () => /sandbox chain ready (\{.*\})/.exec(out)?.[1],
      (found) => found !== undefined,
      60_000,
    );
    const { EVM_RPC_URL } = JSON.parse(settings!) as { EVM_RPC_URL: string };
    const c = chainClients(EVM_RPC_URL, 31337);

    // Idle: the head stays where start-up left it.
    const idle = await c.public.getBlockNumber();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await c.public.getBlockNumber(), 'no blocks while idle').to.equal(idle);

    const hash = await c.wallet.sendTransaction({
      account: c.deployer,
      chain: c.wallet.chain,
      to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      value: 1n,
    });
    const { blockNumber } = await c.public.waitForTransactionReceipt({ hash });
    // Confirmed: its own block and 4 more (EVM_CONFIRMATIONS counts the transaction's own block).
    const mined = Number(blockNumber);
    const head = await eventually(
      async () => Number(await c.public.getBlockNumber()),
      (n) => n >= mined + 4,
      10_000,
    );
    expect(head - mined, 'blocks mined on top of the transaction').to.be.at.least(4);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(Number((await c.public.getBlockNumber()) - blockNumber), 'and then none').to.be.at.most(5);
  });
});
