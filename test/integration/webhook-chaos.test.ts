// Chaos for deliveries: recover and redelivery raced on the same failed deliveries through an API process, and the
// worker process SIGKILLed while the attempts they queued are open at the receiver, then restarted. Every attempt
// must reach the receiver once (the retried activity finds its attempt begun, records it interrupted instead of
// sending it again, and makes the next attempt in its place) and be listed, and every delivery must end delivered.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { ApiProc, kill, killAll, spawnApi, spawnWorker } from '../helpers/processes';
import { Receiver } from '../helpers/receiver';
import { eventually, newCustomer, TestCustomer } from '../helpers/stack';

const BENEFICIARY_ONLY = [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }];
const DELIVERIES = 4;
const ENV = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_SECONDS: '60' };

type Log = { id: string; status: string; error: string | null; messageId: string; retryAttempts: number };
type Attempt = { attempt: number; trigger: string; httpStatus: number; error: string | null };

describe('webhook chaos: recover and redeliver raced while the worker is killed', function () {
  this.timeout(240000);
  const receiver = new Receiver();
  before(() => receiver.start());
  after(async () => {
    await killAll();
    await receiver.stop();
  });

  async function call(api: ApiProc, c: TestCustomer, method: string, path: string, body?: object) {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': randomUUID() },
      body: body ? JSON.stringify(body) : method === 'POST' ? '{}' : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('sends each attempt at most once, lists every one, and delivers everything in the end', async () => {
    const taskQueue = `cambio-webhook-chaos-${randomUUID()}`;
    const [api, worker] = await Promise.all([
      spawnApi('api', taskQueue, ENV),
      spawnWorker('worker', taskQueue, { env: ENV }),
    ]);
    const c = await newCustomer('Chaos Hooks Ltda');
    receiver.fallback = { status: 500 };
    const sub = await call(api, c, 'POST', '/api/subscriptions', { url: receiver.url, resources: BENEFICIARY_ONLY });
    expect(sub.status, JSON.stringify(sub.body)).to.equal(201);
    const subId = sub.body.id as string;
    for (let i = 0; i < DELIVERIES; i++) {
      const body = beneficiaryBody(pixInstruction('EMAIL', `chaos${i}-${randomUUID()}@example.com`));
      expect((await call(api, c, 'POST', '/api/beneficiaries', body)).status).to.equal(201);
    }
    const list = async () =>
      (await call(api, c, 'GET', `/api/subscriptions/${subId}/executionLogs?limit=100`)).body.data as Log[];
    const failed = await eventually(
      list,
      (ls) => ls.length === DELIVERIES && ls.every((l) => l.status === 'FAILED'),
      60000,
    );

    // The attempts the race queues hang at the receiver until the worker dies.
    receiver.fallback = { status: 200, delayMs: 120000 };
    const since = new Date(Date.now() - 600_000).toISOString();
    const recover = () => call(api, c, 'POST', `/api/subscriptions/${subId}/recover`, { since });
    const redeliver = (id: string) => call(api, c, 'POST', `/api/subscriptions/${subId}/executionLogs/${id}/redeliver`);
    const answers = await Promise.all([recover(), ...failed.map((l) => redeliver(l.id)), recover()]);
    const queued =
      (answers[0].body.count as number) +
      (answers[answers.length - 1].body.count as number) +
      answers.slice(1, -1).filter((a) => a.status === 202).length;
    expect(queued, JSON.stringify(answers.map((a) => [a.status, a.body.code ?? a.body.count]))).to.equal(DELIVERIES);
    await eventually(
      async () => receiver.received.length,
      (n) => n === 2 * DELIVERIES,
      60000,
    );
    await kill(worker);

    // A new worker retries the cut attempts after their heartbeat timeout: each is recorded as interrupted, not
    // sent again, and the next attempt is made in its place.
    receiver.fallback = { status: 200 };
    await spawnWorker('worker-restarted', taskQueue, { env: ENV });
    const done = await eventually(list, (ls) => ls.every((l) => l.status === 'SUCCESS'), 120000);
    await new Promise((res) => setTimeout(res, 1000));
    for (const l of done) {
      const path = `/api/subscriptions/${subId}/executionLogs/${l.id}/attempts?sortOrder=ASCENDING`;
      const attempts = (await call(api, c, 'GET', path)).body.data as Attempt[];
      const posts = receiver.received.filter((x) => x.headers['webhook-id'] === l.messageId);
      expect(l.retryAttempts).to.equal(2);
      expect(posts, l.id).to.have.length(3);
      expect(attempts.map((a) => [a.attempt, a.httpStatus])).to.deep.equal([
        [1, 500],
        [2, 0],
        [3, 200],
      ]);
      expect(attempts[1].error).to.match(/^interrupted/);
      expect(attempts[2].trigger).to.equal(attempts[1].trigger);
    }
  });
});
