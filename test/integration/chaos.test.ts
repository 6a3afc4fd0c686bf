// Chaos: 2 API and 2 worker processes on the run's Temporal server and Postgres. Clients create transfers and
// swaps through both APIs and retry every failure (no answer, 5xx, 409 IDEMPOTENCY_KEY_IN_USE) with the SAME key
// on the other API; one API and one worker are SIGKILLed mid-load and the worker is restarted. Every accepted
// operation must settle exactly once, and the ledger must add up to the cent.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Decimal from 'decimal.js';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { balance, fund } from '../helpers/money';
import { ApiProc, kill, killAll, Proc, spawnApi, spawnWorker, waitForPollers } from '../helpers/processes';
import { eventually, newCustomer, stack, TestCustomer } from '../helpers/stack';

const CLIENTS = 4;
const OPS_PER_CLIENT = 12;
const FUNDING = '2000.00';
// A client gives up on one request after this long: far beyond what a retry on the surviving API needs.
const REQUEST_DEADLINE_MS = 30000;
const RETRY_DELAY_MS = 100;

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

interface Answer {
  status: number;
  body: { id?: string; code?: string; targetAmount?: { value: string }; sourceAmount?: { value: string } };
}

interface Attempt {
  api: string;
  outcome: string;
}

/** The client side: retries with the same key on the other API until an answer that is not worth retrying. */
class ChaosClient {
  attempts = new Map<string, Attempt[]>();
  /** Operation creates under way per API: the kill must land while one is, or nothing tests the failover. */
  createsInFlight = new Map<string, number>();
  /** APIs a request found dead. A create the kill did not cut (its answer was already on its way) does not tell the
   * client; the next request sent there does, and fails over, as behind a load balancer that learns from a failure. */
  private readonly knownDead = new Set<string>();
  constructor(
    private readonly apis: ApiProc[],
    private readonly c: TestCustomer,
  ) {}

  async send(path: string, body: unknown, key: string, preferred: number): Promise<Answer> {
    const deadline = Date.now() + REQUEST_DEADLINE_MS;
    const log: Attempt[] = [];
    this.attempts.set(key, log);
    for (let attempt = 0; ; attempt++) {
      // A dead API is skipped once a request has found it dead.
      const live = this.apis.filter((a) => !this.knownDead.has(a.name));
      const api =
        live.length === 0
          ? this.apis[0]
          : live.includes(this.apis[(preferred + attempt) % 2])
            ? this.apis[(preferred + attempt) % 2]
            : live[0];
      let answer: Answer | undefined;
      const isCreate = path.startsWith('/api/operations/');
      if (isCreate) this.createsInFlight.set(api.name, (this.createsInFlight.get(api.name) ?? 0) + 1);
      try {
        const res = await fetch(`${api.url}${path}`, {
          method: 'POST',
          headers: { ...this.c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10000),
        });
        answer = { status: res.status, body: (await res.json()) as Answer['body'] };
        const code = answer.body.code ? ` ${answer.body.code}` : '';
        const replayed = res.headers.get('idempotent-replayed') ? ' replayed' : '';
        log.push({ api: api.name, outcome: `${res.status}${code}${replayed}` });
      } catch (err) {
        log.push({ api: api.name, outcome: `no answer: ${(err as Error).message}` });
        if (!api.alive()) this.knownDead.add(api.name);
      } finally {
        if (isCreate) this.createsInFlight.set(api.name, this.createsInFlight.get(api.name)! - 1);
      }
      const retry =
        !answer || answer.status >= 500 || (answer.status === 409 && answer.body.code === 'IDEMPOTENCY_KEY_IN_USE');
      if (!retry) return answer!;
      if (Date.now() > deadline) throw new Error(`${path} with key ${key} got no final answer: ${JSON.stringify(log)}`);
      await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
    }
  }
}

describe('chaos: 2 APIs and 2 workers, one of each SIGKILLed mid-load', function () {
  this.timeout(115000);
  after(killAll);

  it('settles every accepted operation exactly once; operations = keys answered 2xx; balances add up', async () => {
    const taskQueue = `cambio-chaos-${randomUUID()}`;
    const spawning = Promise.all([
      spawnApi('api-1', taskQueue),
      spawnApi('api-2', taskQueue),
      spawnWorker('worker-1', taskQueue),
      spawnWorker('worker-2', taskQueue),
    ]);
    spawning.catch(() => undefined);

    // Funding goes through the in-process stack (its own task queue); the load goes through the processes.
    const c = await newCustomer('Chaos Capital SA');
    const [a, b] = await Promise.all([activeAccount(c, ['BRL', 'USD']), activeAccount(c, ['BRL', 'USD'])]);
    await Promise.all([fund(c, a.id, 'BRL', FUNDING), fund(c, b.id, 'BRL', FUNDING)]);
    const [api1, api2, worker1] = (await spawning) as [ApiProc, ApiProc, Proc, Proc];
    await waitForPollers(taskQueue, 2);
    const client = new ChaosClient([api1, api2], c);

    type Kind = 'A_TO_B' | 'B_TO_A' | 'SWAP';
    const creates = new Map<string, { kind: Kind; path: string; body: Record<string, unknown>; answer: Answer }>();
    let accepted = 0;

    async function runOne(kind: Kind, preferred: number): Promise<void> {
      const key = randomUUID();
      let path = '/api/operations/transfer';
      let body: Record<string, unknown>;
      if (kind === 'SWAP') {
        const q = await client.send(
          '/api/quotes',
          { accountId: a.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '20.00' },
          randomUUID(),
          preferred,
        );
        expect(q.status, JSON.stringify(q.body)).to.equal(201);
        path = '/api/operations/swap';
        body = { accountId: a.id, quoteId: q.body.id };
      } else {
        const [from, to, value] = kind === 'A_TO_B' ? [a.id, b.id, '10.00'] : [b.id, a.id, '6.00'];
        body = { sourceAccountId: from, targetAccountId: to, amount: { value, asset: 'BRL' } };
      }
      const answer = await client.send(path, body, key, preferred);
      creates.set(key, { kind, path, body, answer });
      if (answer.status === 201) accepted++;
    }

    const total = CLIENTS * OPS_PER_CLIENT;
    const kinds: Kind[] = ['A_TO_B', 'B_TO_A', 'SWAP'];
    const load = Promise.all(
      Array.from({ length: CLIENTS }, async (_, n) => {
        for (let i = 0; i < OPS_PER_CLIENT; i++) await runOne(kinds[(n + i) % kinds.length], (n + i) % 2);
      }),
    );
    load.catch(() => undefined);

    // Mid-load: one API and one worker die without warning; the worker comes back (a supervisor would restart it).
    await eventually(
      async () => accepted,
      (n) => n >= total / 4,
      60000,
      10,
    );
    await eventually(
      async () => client.createsInFlight.get(api1.name) ?? 0,
      (n) => n > 0,
      30000,
      1,
    );
    const acceptedAtKill = accepted;
    await Promise.all([kill(api1), kill(worker1)]);
    const restarted = spawnWorker('worker-1-restarted', taskQueue);
    restarted.catch(() => undefined);
    await load;
    await restarted;
    expect(acceptedAtKill, 'the kill landed mid-load').to.be.below(total);

    // Every create got a final answer, and every one was a success: a retry after a crash never sees its own
    // consumed quote (QUOTE_ALREADY_CONSUMED) or any other refusal.
    const answers = [...creates.entries()];
    expect(answers).to.have.length(total);
    const refused = answers.filter(([, v]) => v.answer.status !== 201);
    expect(
      refused,
      JSON.stringify(refused.map(([k, v]) => ({ key: k, answer: v.answer, attempts: client.attempts.get(k) }))),
    ).to.deep.equal([]);
    const retriedAfterFailure = answers.filter(([k]) => client.attempts.get(k)!.length > 1);
    expect(retriedAfterFailure.length, 'some requests failed over to the other API').to.be.greaterThan(0);

    // One operation per key answered 2xx, no key answered two ids, nothing created that nobody was told about.
    const idsByKey = new Map(answers.map(([k, v]) => [k, v.answer.body.id!]));
    expect(new Set(idsByKey.values()).size, 'no two keys share an operation').to.equal(total);
    const rows = await eventually(
      () =>
        sql<{ id: string; status: string; type: string }>(
          `select id, status, type from operations where account_id in (?) and type in ('SWAP', 'TRANSFER')`,
          [[a.id, b.id]],
        ),
      (ops) => ops.length === total && ops.every((o) => o.status === 'COMPLETED' || o.status === 'FAILED'),
      60000,
      250,
    ).catch(async (err: Error) => {
      const stuck = await sql(
        `select id, status from operations where account_id in (?) and type in ('SWAP', 'TRANSFER') and ` +
          `status not in ('COMPLETED', 'FAILED')`,
        [[a.id, b.id]],
      );
      throw new Error(`${err.message.slice(0, 300)}\nnot finished: ${JSON.stringify(stuck)}`);
    });
    expect(rows.map((r) => r.id).sort(), 'the operations are exactly those answered 2xx').to.deep.equal(
      [...idsByKey.values()].sort(),
    );
    expect(
      rows.filter((r) => r.status !== 'COMPLETED'),
      'every accepted operation completed',
    ).to.deep.equal([]);

    // Asked again now, every key answers the same operation (a replay), never a second one.
    const again = await Promise.all(answers.map(([key, v]) => client.send(v.path, v.body, key, 1)));
    expect(
      again.map((r) => [r.status, r.body.id]),
      'replays name the same operations',
    ).to.deep.equal(answers.map(([, v]) => [201, v.answer.body.id]));

    // Exactly one hold and one settle per operation, no release.
    const postings = await sql<{ key: string; n: string }>(
      `select key, count(*) as n from ledger_transactions where operation_id in (?) group by key`,
      [[...idsByKey.values()]],
    );
    const byKey = new Map(postings.map((p) => [p.key, Number(p.n)]));
    for (const id of idsByKey.values()) {
      expect(
        [byKey.get(`${id}:hold`), byKey.get(`${id}:settle`), byKey.get(`${id}:release`)],
        `postings of ${id}`,
      ).to.deep.equal([1, 1, undefined]);
    }

    // Balances = funding + settled movements, nothing held.
    const count = (kind: Kind) => answers.filter(([, v]) => v.kind === kind).length;
    const usdBought = answers
      .filter(([, v]) => v.kind === 'SWAP')
      .reduce((sum, [, v]) => sum.plus(v.answer.body.targetAmount!.value), new Decimal(0));
    const brlA = new Decimal(FUNDING)
      .minus(new Decimal('10.00').times(count('A_TO_B')))
      .plus(new Decimal('6.00').times(count('B_TO_A')))
      .minus(new Decimal('20.00').times(count('SWAP')));
    const brlB = new Decimal(FUNDING)
      .plus(new Decimal('10.00').times(count('A_TO_B')))
      .minus(new Decimal('6.00').times(count('B_TO_A')));
    expect(await balance(c, a.id, 'BRL')).to.deep.include({ available: brlA.toFixed(2), held: '0.00' });
    expect(await balance(c, b.id, 'BRL')).to.deep.include({ available: brlB.toFixed(2), held: '0.00' });
    expect(await balance(c, a.id, 'USD')).to.deep.include({ available: usdBought.toFixed(2), held: '0.00' });
    expect(await balance(c, b.id, 'USD')).to.deep.include({ available: '0.00', held: '0.00' });
    // The root hook then checks the whole ledger: entries balance per asset and match the running balances.
  });
});
