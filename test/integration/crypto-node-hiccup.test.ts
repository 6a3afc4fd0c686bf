// A CRYPTO node that fails one call while the rail first reads the chain (decision 0227): the deposit that met it is
// 503 with Retry-After, and the next one, once the node answers, gets its address. A transport failure of a token's
// decimals() read was taken for a contract that is no ERC-20 and kept for the life of the process: every CRYPTO
// deposit was a 500 until a restart.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChain, type TestChain } from '../helpers/chain';
import { cryptoApi, postCryptoDeposit } from '../helpers/crypto-stack';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';

/** A JSON-RPC front of the chain that answers 503 to every eth_call while `failing` is set. */
async function flakyNode(chain: TestChain) {
  const state = { failing: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (state.failing && String(JSON.parse(body.toString()).method) === 'eth_call') {
        res.writeHead(503).end('node overloaded');
        return;
      }
      void fetch(chain.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { state, url, close: () => new Promise((r) => server.close(r)) };
}

describe('A CRYPTO node that fails a call while the chain is first read', function () {
  this.timeout(120_000);

  it('answers 503 with Retry-After, then opens the deposit once the node answers', async () => {
    const st = await stack();
    const chain = await startChain({ chainId: 32_000 + Math.floor(Math.random() * 30_000) });
    const node = await flakyNode(chain);
    try {
      const { api } = cryptoApi(st, chain.env({ EVM_CONFIRMATIONS: '1', SANDBOX: 'true', EVM_RPC_URL: node.url }));
      const c = await newCustomer('Node Hiccup Ltda');
      const account = await activeAccount(c, ['USDC']);
      const deposit = () => postCryptoDeposit(api, c, account.id, '10.00');

      node.state.failing = true;
      const refused = await deposit();
      expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
      expect(refused.body.code).to.equal('SERVICE_UNAVAILABLE');
      expect(refused.headers['retry-after']).to.match(/^\d+$/);

      node.state.failing = false;
      const opened = await deposit();
      expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
      expect(opened.body.intent.fundingInstruction.walletAddress).to.match(/^0x[0-9a-fA-F]{40}$/);
    } finally {
      await node.close();
      await chain.stop();
    }
  });
});
