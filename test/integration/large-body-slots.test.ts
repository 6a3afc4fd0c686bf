// One API process reads a bounded number of KiB of customers' large bodies at once, and one customer's share of them
// (decision 0362): a customer's large bodies past its share wait, then are 429; past the process's, 503; small bodies
// are read at once. The large bodies are held here by their clients, which send the first 100 KiB of a chunked body
// and then nothing until told, as a slow uploader would.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { newCustomer, type TestCustomer } from '../helpers/stack';
import { killAll, spawnApi } from '../helpers/processes';

interface Answer {
  status: number;
  code?: string;
  retryAfter: string | null;
}

const KiB = 1024;

describe('large request bodies, a few KiB at a time per process and per customer', function () {
  this.timeout(120_000);
  after(killAll);

  it("holds a customer's large bodies past its share and all past the process's; small bodies go on", async () => {
    const [a, b, c] = [
      await newCustomer('Corpo A Ltda'),
      await newCustomer('Corpo B Ltda'),
      await newCustomer('Corpo C Ltda'),
    ];
    const api = await spawnApi('api-body-slots', 'body-slots', { BODY_KIB_MAX: '2048', BODY_KIB_PER_CUSTOMER: '1024' });
    const url = new URL('/api/quotes', api.url);
    const headers = (who: TestCustomer) => ({
      ...who.auth,
      'Content-Type': 'application/json',
      'X-Idempotency-Key': randomUUID(),
    });

    /** A POST whose body is sent in full, with its Content-Length (its schema refuses it once read). */
    const post = async (who: TestCustomer, body: string): Promise<Answer> => {
      const res = await fetch(url, { method: 'POST', headers: headers(who), body });
      const answer = (await res.json()) as { code?: string };
      return { status: res.status, code: answer.code, retryAfter: res.headers.get('retry-after') };
    };
    /** A chunked POST (its length not declared: it takes a whole body's slots) that sends 100 KiB, then waits. */
    const held = (who: TestCustomer) => {
      const req = http.request(url, { method: 'POST', headers: { ...headers(who), 'Transfer-Encoding': 'chunked' } });
      const answer = new Promise<Answer>((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              code: (JSON.parse(text) as { code?: string }).code,
              retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
            }),
          );
        });
        req.on('error', reject);
      });
      req.write(`{"padding":"${'a'.repeat(100 * KiB)}`);
      return { answer, finish: () => req.end('"}') };
    };
    const large = (kib: number) => JSON.stringify({ padding: 'a'.repeat(kib * KiB) });

    // A's held body takes its whole share; its second large body waits for it.
    const aHeld = held(a);
    await new Promise((r) => setTimeout(r, 300));
    const aSecond = post(a, large(200));
    // B's held body takes the process's other 1024 KiB; C's large body finds none left.
    const bHeld = held(b);
    await new Promise((r) => setTimeout(r, 300));
    const cLarge = post(c, large(100));
    // A small body is read at once, though every KiB of the process is taken.
    const started = Date.now();
    expect(await post(c, '{"padding":"a"}')).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    expect(Date.now() - started).to.be.below(5000);

    expect(await aSecond, 'A past its share').to.include({ status: 429, code: 'RATE_LIMITED', retryAfter: '1' });
    expect(await cLarge, 'C past the process').to.include({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      retryAfter: '2',
    });

    // The held bodies end: they are read, parsed and answered, and their KiB given back.
    aHeld.finish();
    bHeld.finish();
    expect(await aHeld.answer).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await bHeld.answer).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    for (const who of [a, b, c])
      expect(await post(who, large(900))).to.include({ status: 400, code: 'VALIDATION_ERROR' });
  });
});
