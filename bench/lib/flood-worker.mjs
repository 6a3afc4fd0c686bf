// A bench's flooding clients on a thread of their own (bench/neighbours.ts): the bytes they send and read would
// otherwise hold the event loop of the thread that times the quiet customer, and the timings would be the bench's.
// workerData: { requests: [{ url, token }], clients, method, served, and body: 'json', 'malformed', 'chunked',
// 'json-64k' or undefined }. Posts { answered, refused } when told 'stop'.
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';

const { requests, clients, method, body, served } = workerData;
const MiB = 1024 * 1024;
// The largest body the API reads (1 MiB), valid JSON: `{"padding":"aaa…"}`.
const BIG_BODY = Buffer.from(`{"padding":"${'a'.repeat(MiB - 20)}"}`);

// The largest body that takes no slot of the process (SMALL_BODY_BYTES, 64 KiB), valid JSON.
const SMALL_BODY = Buffer.from(`{"padding":"${'a'.repeat(64 * 1024 - 14)}"}`);

/** The request's body, per kind: none, 1 MiB of JSON, the same cut short, 2 MiB sent chunked, or 64 KiB of JSON. */
function bodyOf() {
  if (body === 'json') return BIG_BODY;
  if (body === 'json-64k') return SMALL_BODY;
  if (body === 'malformed') return BIG_BODY.subarray(0, BIG_BODY.length - 2);
  if (body === 'chunked') {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    return new ReadableStream({
      pull(controller) {
        if (sent >= 2 * MiB) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
  }
  return undefined;
}

let running = true;
let answered = 0;
let refused = 0;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const loops = requests.flatMap(({ url, token }) =>
  Array.from({ length: clients }, async () => {
    while (running) {
      const payload = bodyOf();
      const headers = { Authorization: `Bearer ${token}` };
      // A quote's POST asks for an idempotency key before its schema is checked.
      if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'X-Idempotency-Key': randomUUID() });
      const res = await fetch(url, {
        method,
        headers,
        body: payload,
        ...(payload instanceof ReadableStream ? { duplex: 'half' } : {}),
      }).catch(() => undefined);
      await res?.arrayBuffer().catch(() => undefined);
      if (res?.status === served) answered++;
      else {
        refused++;
        await sleep(Number(res?.headers.get('retry-after') ?? 1) * 1000);
      }
    }
  }),
);

parentPort.on('message', async (message) => {
  if (message !== 'stop') return;
  running = false;
  await Promise.all(loops);
  parentPort.postMessage({ answered, refused });
});
