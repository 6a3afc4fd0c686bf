// Faults underneath (issue 19): 2 API processes and 1 worker on a Temporal dev server of this test's own (state in
// a file, so it survives a restart) and on Postgres through a small TCP proxy the test can cut. Clients create
// transfers through both APIs and retry with the SAME key on no answer, 5xx or 409 IDEMPOTENCY_KEY_IN_USE. Under that
// load: Postgres is cut and reopened, the Temporal server is SIGKILLed and restarted, an API is frozen with SIGSTOP
// and thawed. No 500 anywhere, 503s carry Retry-After, readiness answers within 1 s during each fault, every
// accepted operation settles exactly once, money is conserved and every completion reaches the webhook receiver.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Decimal from 'decimal.js';
import { Connection } from '@temporalio/client';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { balance, fund } from '../helpers/money';
import { ApiProc, killAll, portForLater, Proc, spawnApi, spawnWorker } from '../helpers/processes';
import { Receiver } from '../helpers/receiver';
import { TcpProxy } from '../helpers/tcp-proxy';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

const { startDevServer } = require('../../scripts/lib/temporal-server') as {
  startDevServer: (o: Record<string, unknown>) => Promise<{
    address: string;
    child: { proc: { kill(s: string): void }; exited: Promise<unknown> };
    stop(ms?: number): Promise<unknown>;
  }>;
};
const { ensureTemporalBinaries } = require('../../scripts/lib/temporal-binary') as {
  ensureTemporalBinaries: (o: object) => { temporal: string };
};

const FUNDING = '5000.00';
const CLIENTS = 3;

interface Seen {
  statuses: Map<number, number>;
  missingRetryAfter: string[];
  fiveHundreds: string[];
}

/** The client side: retries with the same key on the other API until an answer that is not worth retrying. */
class Client {
  readonly seen: Seen = { statuses: new Map(), missingRetryAfter: [], fiveHundreds: [] };
  /** The longest a request took from its first attempt to its final answer, and its attempts. */
  slowest = { ms: 0, attempts: [] as string[] };
  constructor(
    private readonly apis: ApiProc[],
    private readonly c: TestCustomer,
  ) {}

  async send(
    pathname: string,
    body: unknown,
    key: string,
    preferred: number,
  ): Promise<{ status: number; body: { id?: string; code?: string } }> {
    const started = Date.now();
    const deadline = started + 90_000;
    const attempts: string[] = [];
    const done = <T>(answer: T): T => {
      if (Date.now() - started > this.slowest.ms) this.slowest = { ms: Date.now() - started, attempts };
      return answer;
    };
    for (let attempt = 0; ; attempt++) {
      const api = this.apis[(preferred + attempt) % this.apis.length];
      try {
        const res = await fetch(`${api.url}${pathname}`, {
          method: 'POST',
          headers: { ...this.c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(4000),
        });
        const answer = { status: res.status, body: (await res.json()) as { id?: string; code?: string } };
        this.seen.statuses.set(res.status, (this.seen.statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500 && res.status !== 503)
          this.seen.fiveHundreds.push(`${api.name} ${res.status} ${JSON.stringify(answer.body)}`);
        if (res.status === 503 && !res.headers.get('retry-after'))
          this.seen.missingRetryAfter.push(`${api.name} ${JSON.stringify(answer.body)}`);
        attempts.push(
          `${api.name} ${res.status}${answer.body.code ? ` ${answer.body.code}` : ''} at ${Date.now() - started} ms`,
        );
        const retry = res.status >= 500 || (res.status === 409 && answer.body.code === 'IDEMPOTENCY_KEY_IN_USE');
        if (!retry) return done(answer);
      } catch (err) {
        // no answer (timed out, connection refused or reset): the same key again
        attempts.push(`${api.name} no answer (${(err as Error).name}) at ${Date.now() - started} ms`);
      }
      if (Date.now() > deadline) throw new Error(`${pathname} with key ${key} got no final answer`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

/** GET /readyz of each API; the longest time one took to answer (a frozen API is left out by the caller). */
async function readinessMs(apis: ApiProc[]): Promise<number> {
  const times = await Promise.all(
    apis.map(async (api) => {
      const started = Date.now();
      await fetch(`${api.url}/readyz`, { signal: AbortSignal.timeout(5000) }).then((r) => r.arrayBuffer());
      return Date.now() - started;
    }),
  );
  return Math.max(...times);
}

describe('faults: Postgres cut, Temporal killed, an API frozen, under load', function () {
  this.timeout(240_000);
  let receiver: Receiver | undefined;
  let temporalServer: Awaited<ReturnType<typeof startDevServer>> | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cambio-faults-'));
  after(async () => {
    await killAll();
    await receiver?.stop();
    await temporalServer?.stop(5000);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers no 500, readiness within 1 s, and settles every accepted operation exactly once', async () => {
    const { services, config, http } = await stack();
    const temporalBinary = ensureTemporalBinaries({ log: () => undefined }).temporal;
    const temporalPort = await portForLater();
    const startOnce = () =>
      startDevServer({
        temporal: temporalBinary,
        port: temporalPort,
        headless: true,
        dbFile: path.join(dir, 'temporal.db'),
        quiet: true,
        log: () => undefined,
      });
    // A restart right after a SIGKILL can find the port or the state file not yet let go of: try again shortly.
    const startTemporal = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await startOnce();
        } catch (err) {
          if (attempt >= 4) throw err;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    };
    temporalServer = await startTemporal();
    const proxy = new TcpProxy(await portForLater());
    await proxy.open();
    // The application role, as every spawned process of the run (scripts/test.js), through the proxy.
    const dbUrl = new URL(process.env.CAMBIO_TEST_APP_DATABASE_URL ?? config.databaseUrl);
    dbUrl.host = `127.0.0.1:${proxy.port}`;
    const taskQueue = `cambio-faults-${randomUUID()}`;
    // Short bounds, so each fault resolves in seconds (the defaults are documented in the README).
    const env = {
      DATABASE_URL: dbUrl.toString(),
      TEMPORAL_ADDRESS: temporalServer.address,
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '2000',
      DB_LOCK_TIMEOUT_MS: '2000',
      DB_CONNECT_TIMEOUT_MS: '1000',
      DB_POOL_ACQUIRE_TIMEOUT_MS: '2000',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,2,2,2,2,2,2,2',
      RATE_LIMIT_PER_SECOND: '100000',
      RATE_LIMIT_BURST: '100000',
    };
    const spawning = Promise.all([
      spawnApi('api-1', taskQueue, env),
      spawnApi('api-2', taskQueue, env),
      spawnWorker('worker', taskQueue, { pollers: 0, env }),
    ]);
    spawning.catch(() => undefined);

    const c = await newCustomer('Faults Underneath SA');
    const [a, b] = await Promise.all([activeAccount(c, ['BRL']), activeAccount(c, ['BRL'])]);
    await Promise.all([fund(c, a.id, 'BRL', FUNDING), fund(c, b.id, 'BRL', FUNDING)]);
    receiver = await new Receiver().start();
    const sub = await http
      .post('/api/subscriptions')
      .set(c.auth)
      .set(idem())
      .send({ url: receiver.url, includeAll: true, allowRetry: true });
    expect(sub.status, JSON.stringify(sub.body)).to.equal(201);
    const [api1, api2, worker] = (await spawning) as [ApiProc, ApiProc, Proc];
    const client = new Client([api1, api2], c);

    // The load: transfers back and forth, each retried by key until it has a final answer.
    const accepted = new Map<string, { id: string; from: string; value: string }>();
    const refused: string[] = [];
    let running = true;
    const load = Promise.all(
      Array.from({ length: CLIENTS }, async (_, n) => {
        for (let i = 0; running; i++) {
          const aToB = (n + i) % 2 === 0;
          const [from, to, value] = aToB ? [a.id, b.id, '3.00'] : [b.id, a.id, '2.00'];
          const key = randomUUID();
          const res = await client.send(
            '/api/operations/transfer',
            { sourceAccountId: from, targetAccountId: to, amount: { value, asset: 'BRL' } },
            key,
            n + i,
          );
          if (res.status === 201) accepted.set(key, { id: res.body.id!, from, value });
          else refused.push(`${res.status} ${JSON.stringify(res.body)}`);
          // A steady load, not a flood: the test is about faults, not throughput.
          await new Promise((r) => setTimeout(r, 100));
        }
      }),
    );
    load.catch(() => undefined);
    const acceptedBeyond = async (n: number) =>
      eventually(
        async () => accepted.size,
        (size) => size >= n,
        60_000,
        50,
      );
    await acceptedBeyond(10);

    // 1. Postgres cut for 3 s. The waits in steps 1-3 are the faults' lengths, the behaviour under test: readiness
    // is read while the fault lasts and the load runs through all of it.
    await proxy.cut();
    await new Promise((r) => setTimeout(r, 500));
    const readyPgDown = await readinessMs([api1, api2]);
    await new Promise((r) => setTimeout(r, 2500));
    await proxy.open();
    await acceptedBeyond(accepted.size + 10);

    // 2. Temporal SIGKILLed for 4 s, then restarted on the same port and state.
    temporalServer.child.proc.kill('SIGKILL');
    await temporalServer.child.exited;
    await new Promise((r) => setTimeout(r, 1000));
    const readyTemporalDown = await readinessMs([api1, api2]);
    await new Promise((r) => setTimeout(r, 3000));
    temporalServer = await startTemporal();
    await acceptedBeyond(accepted.size + 10);
    // The worker polls the restarted server again (its pollers reconnect by themselves).
    const pollers = async () => {
      const conn = await Connection.connect({ address: temporalServer!.address });
      try {
        const res = await conn.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
        });
        return (res.pollers ?? []).length;
      } finally {
        await conn.close();
      }
    };
    await eventually(pollers, (n) => n > 0, 30_000, 500);
    // The state file is in WAL mode (its header's write and read versions are 2), as `npm start` keeps it: the kill
    // above cost nothing it had committed (every operation below still settles once).
    const header = Buffer.alloc(20);
    const stateFile = fs.openSync(path.join(dir, 'temporal.db'), 'r');
    fs.readSync(stateFile, header, 0, 20, 0);
    fs.closeSync(stateFile);
    expect([header[18], header[19]], 'WAL mode').to.deep.equal([2, 2]);

    // 3. api-1 frozen for 6 s while requests run through it; clients retry their keys on api-2.
    process.kill(api1.child.pid!, 'SIGSTOP');
    let readyFrozen: number;
    try {
      await new Promise((r) => setTimeout(r, 1000));
      readyFrozen = await readinessMs([api2]);
      await new Promise((r) => setTimeout(r, 5000));
    } finally {
      process.kill(api1.child.pid!, 'SIGCONT');
    }
    await acceptedBeyond(accepted.size + 10);
    running = false;
    await load;

    expect(client.seen.fiveHundreds, 'no 500 anywhere').to.deep.equal([]);
    expect(client.seen.missingRetryAfter, '503s carry Retry-After').to.deep.equal([]);
    expect(refused, 'every transfer was accepted in the end').to.deep.equal([]);
    expect([readyPgDown, readyTemporalDown, readyFrozen], 'readiness answered within 1 s during each fault').to.satisfy(
      (ms: number[]) => ms.every((t) => t < 1000),
    );
    // A request caught by the frozen API is served by the other within 15 s of its first attempt.
    expect(client.slowest.ms, JSON.stringify(client.slowest.attempts)).to.be.below(15_000);
    expect(
      client.seen.statuses.get(503) ?? 0,
      `some faults were seen as 503: ${JSON.stringify([...client.seen.statuses])}`,
    ).to.be.greaterThan(0);

    // Exactly the accepted operations exist, each COMPLETED, each with one hold and one settle.
    const ids = [...accepted.values()].map((v) => v.id);
    expect(new Set(ids).size, 'no two keys share an operation').to.equal(ids.length);
    const sql = <T>(q: string, p: unknown[] = []) => systemEm(services.orm).execute(q, p) as Promise<T[]>;
    const rows = await eventually(
      () =>
        sql<{ id: string; status: string }>(
          `select id, status from operations where account_id in (?) and type = 'TRANSFER'`,
          [[a.id, b.id]],
        ),
      (ops) => ops.length === ids.length && ops.every((o) => o.status === 'COMPLETED'),
      90_000,
      250,
    ).catch(async () => {
      const open = await sql(
        `select status, count(*)::int as n from operations where account_id in (?) and type = 'TRANSFER' ` +
          `group by status`,
        [[a.id, b.id]],
      );
      const outbox = await sql(
        `select count(*)::int as n, max(attempts) as attempts, min(next_attempt_at) as next from ` +
          `workflow_starts where task_queue = ?`,
        [taskQueue],
      );
      const polling = await pollers().catch((err: Error) => err.message);
      // One operation still open, as Temporal sees it.
      const [stuck] = await sql<{ id: string }>(
        `select id from operations where account_id in (?) and type = 'TRANSFER' and status <> 'COMPLETED' limit 1`,
        [[a.id, b.id]],
      );
      const described = stuck
        ? await (async () => {
            const conn = await Connection.connect({ address: temporalServer!.address });
            try {
              const d = await conn.workflowService.describeWorkflowExecution({
                namespace: 'default',
                execution: { workflowId: `operation-${stuck.id}` },
              });
              return JSON.stringify({
                status: d.workflowExecutionInfo?.status,
                historyLength: String(d.workflowExecutionInfo?.historyLength),
                pendingActivities: d.pendingActivities?.length,
                pendingTask: d.pendingWorkflowTask?.state,
              });
            } catch (err) {
              return (err as Error).message;
            } finally {
              await conn.close();
            }
          })()
        : 'none';
      throw new Error(
        `not settled: ${JSON.stringify(open)}; outbox ${JSON.stringify(outbox)}; pollers ${polling}; a ` +
          `stuck workflow ${described}; worker alive ${worker.alive()}:\n${worker.output().slice(-3000)}`,
      );
    });
    expect(rows.map((r) => r.id).sort()).to.deep.equal([...ids].sort());
    const postings = await sql<{ key: string; n: number }>(
      `select key, count(*)::int as n from ledger_transactions where operation_id in (?) group by key`,
      [ids],
    );
    expect(
      postings.filter((p) => p.n !== 1),
      'each posting once',
    ).to.deep.equal([]);
    expect(postings.filter((p) => p.key.endsWith(':settle')).length).to.equal(ids.length);

    // Money conserved: both balances are the funding plus what the accepted transfers moved, nothing held.
    const moved = (from: string) =>
      [...accepted.values()].filter((v) => v.from === from).reduce((s, v) => s.plus(v.value), new Decimal(0));
    const expectedA = new Decimal(FUNDING).minus(moved(a.id)).plus(moved(b.id));
    const expectedB = new Decimal(FUNDING).minus(moved(b.id)).plus(moved(a.id));
    expect(await balance(c, a.id, 'BRL')).to.deep.include({ available: expectedA.toFixed(2), held: '0.00' });
    expect(await balance(c, b.id, 'BRL')).to.deep.include({ available: expectedB.toFixed(2), held: '0.00' });

    // Webhooks: every completion reached the receiver (deduplicated by operation id).
    const completedDelivered = () =>
      new Set(
        receiver!.received
          .filter((r) => r.headers['x-event-type'] === 'OPERATION_COMPLETED')
          .map((r) => (JSON.parse(r.body) as { id?: string }).id)
          .filter((id): id is string => !!id && ids.includes(id)),
      ).size;
    await eventually(
      async () => completedDelivered(),
      (n) => n === ids.length,
      60_000,
      250,
    );
  });
});
