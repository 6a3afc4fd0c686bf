// The noisy neighbour (issue 20): customer A's receivers accept deliveries and never answer (then: answer after
// 5 s) while A creates deposits at ~4/s, each fanned out to three URLs. Customer B's transfers, timed from POST to
// COMPLETED, and B's deliveries to a healthy receiver must not notice the receivers: both are compared with B's
// own while another customer creates deposits at the same rate for receivers that answer at once.
// That volume alone slows B on a small machine (two cores here: A's deposits and their deliveries take CPU B's
// transfers need), which is fair share's question (fair-share.test.ts), not this one's. Runs an API and a worker
// process with the production settings (WEBHOOK_TIMEOUT_SECONDS 10, the worker's real slot sizes) on task queues of
// their own, so the hanging attempts really hold slots for the whole timeout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';
import { ApiProc, killAll, spawnApi, spawnWorker } from '../helpers/processes';
import { Receiver } from '../helpers/receiver';
import { eventually, newCustomer, stack, TestCustomer } from '../helpers/stack';

const CAP = 4; // WEBHOOK_ENDPOINT_CONCURRENCY's default, which the processes run with
const A_URLS = 3;
const A_DEPOSITS_PER_SECOND = 4;
// Each p50 is of 15 transfers: the full suite runs this file beside another shard whose load comes and goes between
// the baseline and the flood, and a median of fewer moves with it (medians of 9 read 1.45x in one full-suite run,
// 292 against 202 ms, with A's attempts held at their cap and B's deliveries on time).
const B_TRANSFERS = 15;
const TRANSFER_LIMIT_MS = 12000;

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A receiver that holds every request for `holdMs` (or forever) and counts the requests open per path. */
class HoldingReceiver {
  open = new Map<string, number>();
  maxOpen = new Map<string, number>();
  received = 0;
  private server: http.Server;
  constructor(private holdMs: number | undefined) {
    this.server = http.createServer((req, res) => {
      const path = req.url ?? '';
      this.received += 1;
      this.open.set(path, (this.open.get(path) ?? 0) + 1);
      this.maxOpen.set(path, Math.max(this.maxOpen.get(path) ?? 0, this.open.get(path)!));
      // Closed by us (after holdMs) or by the sender giving up at its timeout.
      res.on('close', () => this.open.set(path, this.open.get(path)! - 1));
      req.resume();
      if (this.holdMs !== undefined) {
        const timer = setTimeout(() => res.writeHead(200).end('ok'), this.holdMs);
        res.on('close', () => clearTimeout(timer));
      }
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }
  get openTotal(): number {
    return [...this.open.values()].reduce((a, b) => a + b, 0);
  }
  /** Samples `openTotal` every 20 ms until `stop`: the average number of requests held open over that time. */
  watchOpen(): { stop(): number } {
    const samples: number[] = [];
    const timer = setInterval(() => samples.push(this.openTotal), 20);
    return {
      stop: () => {
        clearInterval(timer);
        return samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : this.openTotal;
      },
    };
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('webhook isolation: a customer whose receivers hang cannot slow another customer', function () {
  this.timeout(180000);
  let api: ApiProc;
  let healthy: Receiver;

  const call = async (c: TestCustomer, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': randomUUID() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  /**
   * One transfer of B, from its POST to COMPLETED as B sees it (polling its GET; a 429 of B's own rate limit is
   * "not yet"), in ms; a transfer still not COMPLETED after TRANSFER_LIMIT_MS counts as that long, so a slow
   * one fails the latency assertion with the figures rather than a timeout.
   */
  async function timedTransfer(b: TestCustomer, from: string, to: string): Promise<{ ms: number; id: string }> {
    const t0 = Date.now();
    const amount = { value: '1.00', asset: 'BRL' };
    const op = await call(b, 'POST', '/api/operations/transfer', {
      sourceAccountId: from,
      targetAccountId: to,
      amount,
    });
    while (Date.now() - t0 < TRANSFER_LIMIT_MS) {
      const res = await fetch(`${api.url}/api/operations/${op.id}`, { headers: b.auth });
      const status =
        res.status === 200
          ? ((await res.json()) as { currentState: { status: string } }).currentState.status
          : undefined;
      if (status === 'COMPLETED') break;
      await new Promise((r) => setTimeout(r, res.status === 429 ? 100 : 10));
    }
    return { ms: Math.min(Date.now() - t0, TRANSFER_LIMIT_MS), id: op.id };
  }

  /**
   * A customer creating PIX deposits at A_DEPOSITS_PER_SECOND (a quote and a deposit each) until `stop`, which
   * resolves once the deposit under way is done.
   */
  function floodOfDeposits(c: TestCustomer, accountId: string): { deposits(): number; stop(): Promise<void> } {
    let flooding = true;
    let deposits = 0;
    const flood = (async () => {
      const t0 = Date.now();
      while (flooding) {
        const q = await call(c, 'POST', '/api/quotes', {
          accountId,
          sourceAsset: 'BRL',
          targetAsset: 'BRL',
          sourceAmount: '10.00',
        });
        await call(c, 'POST', '/api/operations/deposit', {
          accountId,
          quoteId: q.id,
          fundingInstruction: { rail: 'PIX_KEY' },
        });
        deposits += 1;
        const next = t0 + (deposits * 1000) / A_DEPOSITS_PER_SECOND;
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
    })();
    return {
      deposits: () => deposits,
      async stop() {
        flooding = false;
        await flood;
      },
    };
  }

  /** Subscribes `c` to its operations' OPERATION_REQUESTED at A_URLS paths of `receiver`. */
  async function subscribeAt(c: TestCustomer, receiver: HoldingReceiver, prefix: string): Promise<void> {
    for (let i = 1; i <= A_URLS; i++) {
      const resources = [{ name: 'OPERATION', events: ['OPERATION_REQUESTED'] }];
      await call(c, 'POST', '/api/subscriptions', { url: receiver.url(`/${prefix}/${i}`), resources });
    }
  }

  /** First-attempt latency of each operation's OPERATION_COMPLETED delivery to B: event committed → received. */
  async function firstAttemptLatencies(operationIds: string[]): Promise<number[]> {
    const { services } = await stack();
    const rows = await eventually(
      async () => {
        const found = (await systemEm(services.orm).execute(
          `select l.message_id, e.created_at from execution_logs l join events e on e.id = l.event_id
           where e.resource_id = any(?::uuid[]) and e.type = 'OPERATION_COMPLETED'`,
          [`{${operationIds.join(',')}}`],
        )) as Array<{ message_id: string; created_at: Date }>;
        return found.filter((r) => healthy.received.some((x) => x.headers['webhook-id'] === r.message_id));
      },
      (found) => found.length === operationIds.length,
      60000,
      50,
    );
    const arrival = (messageId: string) => healthy.received.find((x) => x.headers['webhook-id'] === messageId)!.at;
    return rows.map((r) => arrival(r.message_id) - new Date(r.created_at).getTime());
  }

  /** Resolves once none of `c`'s deliveries is PENDING any more (its receivers answer at once: each is delivered). */
  async function allDelivered(c: TestCustomer): Promise<void> {
    const { services } = await stack();
    await eventually(
      async () =>
        (
          (await systemEm(services.orm).execute(
            `select count(*)::int as n from execution_logs where customer_id = ? and status = 'PENDING'`,
            [c.customerId],
          )) as Array<{ n: number }>
        )[0].n,
      (n) => n === 0,
      90000,
      100,
    );
  }

  before(async () => {
    const taskQueue = `cambio-noisy-${randomUUID()}`;
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_SECONDS: '10', LOG_LEVEL: 'warn' };
    const spawning = Promise.all([
      spawnApi('api-noisy', taskQueue, env),
      spawnWorker('worker-noisy', taskQueue, { env }),
    ]);
    spawning.catch(() => undefined);
    healthy = await new Receiver().start();
    [api] = (await spawning) as [ApiProc, unknown];
  });

  after(async () => {
    await killAll();
    await healthy?.stop();
  });

  for (const [kind, holdMs] of [
    ['hang (accept, never answer)', undefined],
    ['answer after 5 s', 5000],
  ] as const) {
    it(`receivers that ${kind}: B's transfers and first attempts keep their latency`, async () => {
      const noisy = await new HoldingReceiver(holdMs).start();
      const prompt = await new HoldingReceiver(0).start();
      try {
        const a = await newCustomer('Noisy Neighbour SA');
        const calm = await newCustomer('Busy But Healthy SA');
        const b = await newCustomer('Quiet Customer Ltda');
        const [aAccount, calmAccount, b1, b2] = await Promise.all([
          activeAccount(a, ['BRL']),
          activeAccount(calm, ['BRL']),
          activeAccount(b, ['BRL']),
          activeAccount(b, ['BRL']),
        ]);
        await fund(b, b1.id, 'BRL', '1000.00');
        await subscribeAt(a, noisy, 'a');
        await subscribeAt(calm, prompt, 'calm');
        const bResources = [{ name: 'OPERATION', events: ['OPERATION_COMPLETED'] }];
        await call(b, 'POST', '/api/subscriptions', { url: healthy.url, resources: bResources });

        // B alone, for the report.
        await timedTransfer(b, b1.id, b2.id); // warm-up
        const alone: number[] = [];
        for (let i = 0; i < B_TRANSFERS; i++) alone.push((await timedTransfer(b, b1.id, b2.id)).ms);

        // The baseline: B while another customer creates deposits at A's rate for receivers that answer at once.
        // Each baseline ends once that customer's deliveries are all made: on a saturated host they trail its flood
        // by seconds, and left to drain under the next phase they are a second flood there that the comparison does
        // not count. This file alone beside three CPU-spinning loops on a 2-core host, the second case, B's first
        // attempts (medians): beside the healthy flood 5.2 and 1.6 s, during A's 0.8 and 4.9 s, in two runs without
        // this wait; 0.6 and 0.5 s, 0.9 and 1.0 s in two runs with it (docs/decisions/0363).
        const besideHealthy = async () => {
          const calmFlood = floodOfDeposits(calm, calmAccount.id);
          const timed: Array<{ ms: number; id: string }> = [];
          try {
            await eventually(
              async () => calmFlood.deposits(),
              (n) => n >= 3 * A_DEPOSITS_PER_SECOND,
              30000,
              20,
            );
            for (let i = 0; i < B_TRANSFERS; i++) timed.push(await timedTransfer(b, b1.id, b2.id));
          } finally {
            await calmFlood.stop();
          }
          await allDelivered(calm);
          return timed;
        };
        const before = await besideHealthy();
        const besideVolume = before.map((t) => t.ms);
        const besideIds = before.map((t) => t.id);
        // B's deliveries beside that volume: the baseline of B's first attempts during A's flood.
        const firstAttemptsBeside = await firstAttemptLatencies(besideIds);

        // A's flood: deposits at ~4/s, each delivered to three URLs that hold every request.
        const flood = floodOfDeposits(a, aAccount.id);
        let duringP50 = Infinity;
        let duringReport = '';
        try {
          // B is measured once A has flooded for 3 s (36 deliveries, more than settlement's 20 local-activity slots,
          // so attempts that shared them would starve it) and its attempts hold their share of delivery slots: every
          // URL at its cap of requests open.
          const flooded = (n: { deposits: number; open: number }) =>
            n.deposits >= 3 * A_DEPOSITS_PER_SECOND && n.open >= A_URLS * CAP;
          await eventually(async () => ({ deposits: flood.deposits(), open: noisy.openTotal }), flooded, 30000, 20);
          const held = noisy.watchOpen();
          const during: Array<{ ms: number; id: string }> = [];
          for (let i = 0; i < B_TRANSFERS; i++) during.push(await timedTransfer(b, b1.id, b2.id));
          const averageOpen = held.stop();
          const report = (firstAttempts?: number[]) =>
            `alone ${JSON.stringify(alone)}; beside a healthy customer's deposits ${JSON.stringify(besideVolume)}; ` +
            `during A's flood ${JSON.stringify(during.map((d) => d.ms))}; ` +
            `B first attempts ${JSON.stringify(firstAttempts ?? 'not yet')} (beside the healthy customer's deposits ` +
            `${JSON.stringify(firstAttemptsBeside)}); A: ${flood.deposits()} deposits, ` +
            `${noisy.received} requests received, ${averageOpen.toFixed(1)} open on average while B was timed, ` +
            `most open per URL ${JSON.stringify([...noisy.maxOpen.values()])}`;
          if (process.env.WEBHOOK_ISOLATION_REPORT) process.stderr.write(`${kind}: ${report()}\n`);
          // A's attempts held their slots while B was timed. Hanging ones hold theirs until the 10 s timeout, and the
          // next attempt takes the slot back only after the failed one's activity has ended and the next has been
          // scheduled and connected: 11.6 of 12 on average in one CI run on a busy host, 9.7 of 12 in a full-suite
          // run on a 2-core host with both shards saturating it, so three in four at least.
          // Receivers that answer after 5 s give theirs back, and A's next deliveries take them again after their
          // booked wait, which a slower host stretches (8.7 of 12 on average in one full-suite run on a slow 2-core
          // host, 10 of 12 at the end in an earlier one): half at least, so A's attempts keep coming back to its slow
          // receivers while B is timed.
          expect(averageOpen, report()).to.be.at.least((holdMs === undefined ? 0.75 : 0.5) * A_URLS * CAP);
          // B's p50 is checked once A's flood is over (below): within 2x the baseline, and under issue 20's 500 ms,
          // which it asked for where B alone took 62 ms: eight times B alone on a slower host. A bound of 500 ms or
          // the baseline, whichever was larger, failed on a slow 2-core host with the ratio well within 2x (601 ms
          // against 435 beside the healthy volume and 188 alone), because for a baseline between 250 and 500 ms it
          // asked B for less than 2x.
          duringReport = report();
          duringP50 = p50(during.map((d) => d.ms));
          const firstAttempts = await firstAttemptLatencies(during.map((d) => d.id));
          if (process.env.WEBHOOK_ISOLATION_REPORT) process.stderr.write(`${kind}: ${report(firstAttempts)}\n`);
          // Under 1 s, or within 2x B's first attempts beside the healthy customer's volume when a slow host makes
          // those slow too. Full-suite runs on a busy 2-core host measured medians of 1,144 and 2,247 ms during the
          // flood; this file alone on the same host, 0.3 to 0.8 s during it and 0.5 to 0.7 s beside the healthy volume.
          expect(p50(firstAttempts), report(firstAttempts)).to.be.below(Math.max(1000, 2 * p50(firstAttemptsBeside)));
          // The cap held: no URL of A ever had more than WEBHOOK_ENDPOINT_CONCURRENCY attempts at once.
          for (const n of noisy.maxOpen.values()) expect(n, report(firstAttempts)).to.be.at.most(CAP);
        } finally {
          await flood.stop();
        }
        // Stop A's backlog: deleting a subscription ends its pending and waiting deliveries.
        for (const s of (await call(a, 'GET', '/api/subscriptions')).data as Array<{ id: string }>) {
          const headers = { ...a.auth, 'X-Idempotency-Key': randomUUID() };
          await fetch(`${api.url}/api/subscriptions/${s.id}`, { method: 'DELETE', headers });
        }
        // The baseline again, after A's flood: the suite's other shards load this host unevenly, and a baseline taken
        // before alone once put 2x at 324 ms while the host's load climbed through the measurement (B's transfers
        // during the flood rose from 97 to 633 ms). B during A's flood is held to 2x the healthy volume measured on
        // either side of it.
        const after = (await besideHealthy()).map((t) => t.ms);
        const baseline = Math.max(p50(besideVolume), p50(after));
        const said = `${duringReport}; beside the healthy customer's deposits again ${JSON.stringify(after)}`;
        expect(duringP50, said)
          .to.be.at.most(Math.max(2 * baseline, 1))
          .and.below(Math.max(500, 8 * p50(alone)));
      } finally {
        await noisy.stop();
        await prompt.stop();
      }
    });
  }
});
