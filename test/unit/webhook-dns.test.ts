// The webhook URL check's resolver (decision 0166): a name server that never answers costs a bounded wait and a 503,
// and while a customer's names hang, another customer's name still resolves at once: the lookups do not queue
// behind each other. Against a small name server of the test's own over real UDP.
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { checkWebhookUrl, resolverOf } from '../../webhooks/url-policy';

const ANSWER = [93, 184, 216, 34];

/**
 * Answers A queries for names under `good.test` with 93.184.216.34, AAAA queries with no record, names under
 * `missing.test` with NXDOMAIN, and never answers anything else.
 */
async function nameServer(): Promise<{ address: string; close(): void }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, from) => {
    let at = 12;
    const labels: string[] = [];
    while (query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]).toString());
      at += query[at] + 1;
    }
    const name = labels.join('.');
    const question = query.subarray(12, at + 5);
    const type = query.readUInt16BE(at + 1);
    const found = name.endsWith('good.test');
    if (!found && !name.endsWith('missing.test')) return;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(found ? 0x8180 : 0x8183, 2); // a response, recursion available; rcode 3 is NXDOMAIN
    header.writeUInt16BE(1, 4);
    const withAnswer = found && type === 1;
    header.writeUInt16BE(withAnswer ? 1 : 0, 6);
    const answer = withAnswer ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...ANSWER]) : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return { address: `127.0.0.1:${port}`, close: () => socket.close() };
}

describe('webhook URL resolver', function () {
  this.timeout(30000);
  let server: Awaited<ReturnType<typeof nameServer>>;
  before(async () => {
    server = await nameServer();
  });
  after(() => server.close());

  const policy = () => ({ allowPrivate: false, resolve: resolverOf([server.address]) });

  it('resolves a public name, and refuses one that does not exist (400, the URL is wrong)', async () => {
    const ok = await checkWebhookUrl('https://hooks.good.test/h', policy());
    expect(ok.address).to.equal(ANSWER.join('.'));
    const missing = await checkWebhookUrl('https://hooks.missing.test/h', policy()).catch((e: unknown) => e);
    expect(missing).to.include({ code: 'INVALID_WEBHOOK_URL' });
  });

  it('answers 503 within seconds for a name server that never answers, and others resolve meanwhile', async () => {
    const resolve = policy();
    const started = Date.now();
    // A customer whose names hang: more lookups at once than libuv's thread pool has threads.
    const hanging = Array.from({ length: 16 }, (_, i) =>
      checkWebhookUrl(`https://a${i}.hangs.test/h`, resolve).catch((e: unknown) => e),
    );
    const other = Date.now();
    const ok = await checkWebhookUrl('https://b.good.test/h', resolve);
    expect(ok.address).to.equal(ANSWER.join('.'));
    expect(Date.now() - other, "another customer's name is not held up").to.be.below(1000);
    const outcomes = await Promise.all(hanging);
    for (const err of outcomes) expect(err).to.deep.include({ code: 'SERVICE_UNAVAILABLE' });
    expect(Date.now() - started, 'a lookup is bounded').to.be.below(10000);
  });
});
