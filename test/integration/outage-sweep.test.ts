// Every operation of the served /openapi.json, sent to one API process whose Postgres or Temporal sits behind a
// proxy the test cuts (connection refused), stalls (open, silent) and opens again (decisions 0051, 0228): each answer
// is a 503 SERVICE_UNAVAILABLE with Retry-After in the error shape, or the route's own answer when it does not need
// that dependency, and comes within a bound, never a 500 or a hang. Routes are read from the document, so a route
// added later is swept without touching this file; requests go out side by side to stay well under a minute.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest, { Response } from 'supertest';
import { createAccount, getAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';
import { systemEm } from '../../db/orm';
import { beneficiaryBody } from '../helpers/beneficiary-fixtures';
import { depositBody, routeSamples, samplePath } from '../helpers/route-samples';
import { untilStatus } from '../helpers/money';
import { OpenApiDocument, OpenApiOperation, operationsOf, sampleOf } from '../helpers/openapi';
import { postgresDown, temporalDown } from '../helpers/outages';
import { ApiProc, killAll, spawnApi } from '../helpers/processes';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { TcpProxy } from '../helpers/tcp-proxy';

// A short statement bound, so a stalled Postgres costs each request about 3 s (decision 0228).
const STATEMENT_TIMEOUT_MS = 2000;
// What any request may take while a dependency is down: the pool's acquire bound (decision 0052) with some slack.
const ANSWER_WITHIN_MS = 12_000;
const SIDE_BY_SIDE = 16;
// Query values a sample would get wrong (a period must end after it starts), so those requests reach their reads.
const QUERY_VALUES: Record<string, string> = { periodStart: '2026-01-01T00:00:00Z', periodEnd: '2026-02-01T00:00:00Z' };
// Answered from the process's own state: the rate book (the tests' fixed table; live rates keep a snapshot).
const SERVED_WITHOUT_POSTGRES = new Set(['GET /api/rates']);

interface Answer {
  op: string;
  res?: Response;
  ms: number;
  error?: string;
}

describe('every route of /openapi.json while a dependency is down', function () {
  this.timeout(180_000);
  after(killAll);

  let api: ApiProc;
  let postgres: TcpProxy;
  let temporal: TcpProxy;
  let customer: TestCustomer;
  let doc: OpenApiDocument;
  let ids: Record<string, string>;
  let bodies: Record<string, () => Promise<unknown>>;

  before(async () => {
    const { config, http } = await stack();
    const pg = await postgresDown();
    const tp = await temporalDown();
    [postgres, temporal] = [pg.proxy, tp.proxy];
    await postgres.open();
    await temporal.open();
    api = await spawnApi('api-outage-sweep', config.taskQueue, {
      DATABASE_URL: pg.databaseUrl,
      TEMPORAL_ADDRESS: tp.address,
      DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      // The customer's standing stays known through a phase, so requests get past authentication to their routes.
      CUSTOMER_CACHE_SECONDS: '300',
      TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
      TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
    });
    customer = await newCustomer('Outage Sweep Ltda');
    // Bodies that get past validation, so each request goes as deep as its dependency lets it.
    ({ ids, bodies } = await routeSamples(http, customer));
    doc = (await supertest(api.url).get('/openapi.json')).body;
  });

  after(async () => {
    postgres?.resume();
    await postgres?.cut();
    await temporal?.cut();
  });

  const pathOf = (op: OpenApiOperation): string => samplePath(op, ids);

  /** One request of `op`, its body made through the stack (which reaches Postgres directly), bounded in time. */
  async function send(op: OpenApiOperation): Promise<Answer> {
    const key = `${op.method.toUpperCase()} ${op.path}`;
    const schema = op.requestBody?.content['application/json']?.schema;
    const body = bodies[key] ? await bodies[key]() : schema ? sampleOf(doc, schema) : undefined;
    const query = Object.fromEntries(
      op.parameters
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => [p.name, QUERY_VALUES[p.name] ?? String(sampleOf(doc, p.schema, p.name))]),
    );
    const method = op.method as 'get' | 'post' | 'patch' | 'put' | 'delete';
    const started = Date.now();
    try {
      let req = supertest(api.url)[method](pathOf(op)).query(query).set(customer.auth).set(idem());
      req = req.timeout(ANSWER_WITHIN_MS + 10_000);
      const res = body === undefined ? await req : await req.send(body as object);
      return { op: key, res, ms: Date.now() - started };
    } catch (err) {
      return { op: key, ms: Date.now() - started, error: String(err) };
    }
  }

  /** Every operation once, SIDE_BY_SIDE at a time. */
  async function sweep(): Promise<Answer[]> {
    const queue = operationsOf(doc);
    const answers: Answer[] = [];
    const lane = async () => {
      for (let op = queue.shift(); op; op = queue.shift()) answers.push(await send(op));
    };
    await Promise.all(Array.from({ length: SIDE_BY_SIDE }, lane));
    return answers;
  }

  /** What is wrong with an answer given while a dependency is down, or undefined. */
  function fault(a: Answer, mayServe: (op: string) => boolean): string | undefined {
    if (!a.res) return `${a.op}: no answer after ${a.ms} ms (${a.error})`;
    const { status, body, headers } = a.res;
    const seen = `${a.op}: ${status} in ${a.ms} ms ${JSON.stringify(body).slice(0, 200)}`;
    if (a.ms > ANSWER_WITHIN_MS) return `${seen}: too slow`;
    if (status === 503) {
      if (body?.code !== 'SERVICE_UNAVAILABLE') return `${seen}: code`;
      if (typeof body.message !== 'string' || typeof body.details !== 'object') return `${seen}: error shape`;
      if (headers['retry-after'] !== String(body.details.retryAfterSeconds)) return `${seen}: Retry-After`;
      return undefined;
    }
    if (status >= 500) return seen;
    if (!mayServe(a.op)) return `${seen}: served without its dependency`;
    const shaped =
      typeof body?.code === 'string' && typeof body.message === 'string' && typeof body.details === 'object';
    return status >= 400 && !shaped ? `${seen}: error shape` : undefined;
  }

  const report = (answers: Answer[], mayServe: (op: string) => boolean) => {
    // SWEEP_PRINT=1 shows every answer, to see what a route does without its dependency.
    if (process.env.SWEEP_PRINT) console.log(answers.map((a) => `${a.op} ${a.res?.status} ${a.ms} ms`).join('\n'));
    return answers.map((a) => fault(a, mayServe)).filter((f): f is string => f !== undefined);
  };

  /**
   * The routes outside the document, for an orchestrator and for clients: liveness touches nothing, readiness names
   * what is down within 1 s (decision 0020), the document and the signing keys are the process's own.
   */
  async function expectPlatformAnswers(down: 'postgres' | 'temporal'): Promise<void> {
    const http = supertest(api.url);
    // Each answer within 1 s; 503 once the result kept from before the outage (READINESS_CACHE_MS) has expired.
    const ready = await eventually(
      async () => {
        const started = Date.now();
        const res = await http.get('/readyz').timeout(5_000);
        expect(Date.now() - started, '/readyz answers within 1 s').to.be.below(1_500);
        return res;
      },
      (r) => r.status === 503,
      3_000,
      200,
    );
    expect(ready.body.checks[down]).to.equal('unavailable');
    expect((await http.get('/healthz').timeout(1_000)).status).to.equal(200);
    expect((await http.get('/openapi.json').timeout(2_000)).status).to.equal(200);
    expect((await http.get('/.well-known/jwks.json').timeout(2_000)).status).to.equal(200);
    // Gauges it cannot read now keep their last values (cambio_metrics_database_errors_total counts it): a scrape.
    const started = Date.now();
    const metrics = await http.get('/metrics').timeout(15_000);
    expect(metrics.status, metrics.text?.slice(0, 200)).to.equal(200);
    expect(Date.now() - started, '/metrics within the bound').to.be.below(ANSWER_WITHIN_MS);
  }

  const untilReady = () =>
    eventually(
      () => supertest(api.url).get('/readyz'),
      (r) => r.status === 200,
      60_000,
      250,
    );

  /** The customer's standing read while Postgres answers: the phase's requests reach their routes' own reads. */
  const knownCustomer = async () => {
    const res = await supertest(api.url).get('/api/accounts').set(customer.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };

  it('Postgres refused: every route is 503 with Retry-After, within the bound', async () => {
    await knownCustomer();
    await postgres.cut();
    try {
      const faults = report(await sweep(), (op) => SERVED_WITHOUT_POSTGRES.has(op));
      expect(faults, faults.join('\n')).to.deep.equal([]);
      await expectPlatformAnswers('postgres');
    } finally {
      await postgres.open();
      await untilReady();
    }
  });

  it('Postgres stalled: every route is 503 with Retry-After, within the bound', async () => {
    await knownCustomer();
    postgres.stall();
    try {
      const faults = report(await sweep(), (op) => SERVED_WITHOUT_POSTGRES.has(op));
      expect(faults, faults.join('\n')).to.deep.equal([]);
      await expectPlatformAnswers('postgres');
    } finally {
      postgres.resume();
      await untilReady();
    }
  });

  it('Postgres stalled: a route that needs no Postgres does not wait on the shared rate counter', async () => {
    await knownCustomer();
    postgres.stall();
    try {
      // The deployment's rate counter lives in Postgres; while it does not answer, the process's own counter decides
      // (decision 0285), after a short bound of the counter's own, not after a whole statement bound. The share this
      // process took of the counter lasts the rate's window (RATE_LIMIT_BURST / RATE_LIMIT_PER_SECOND, 2 s): past it.
      await new Promise((r) => setTimeout(r, 2_500));
      const started = Date.now();
      const rates = await supertest(api.url).get('/api/rates').set(customer.auth).timeout(20_000);
      expect(rates.status, JSON.stringify(rates.body)).to.equal(200);
      expect(Date.now() - started, 'GET /api/rates within the counter bound').to.be.below(STATEMENT_TIMEOUT_MS);
    } finally {
      postgres.resume();
      await untilReady();
    }
  });

  it('Temporal refused: every route answers, a 503 with Retry-After where it needs Temporal', async () => {
    await temporal.cut();
    try {
      const faults = report(await sweep(), () => true);
      expect(faults, faults.join('\n')).to.deep.equal([]);
      await expectPlatformAnswers('temporal');
    } finally {
      await temporal.open();
      await untilReady();
    }
  });

  /** Sandbox decisions sent while `down` holds (Temporal cut or stalled), then retried with their keys after `up`. */
  async function decisionsAcross(down: () => Promise<void>, up: () => Promise<void>): Promise<void> {
    const { http } = await stack();
    const c = await newCustomer('Outage Sweep Decisions');
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    const beneficiary = await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody());
    const instructionId = beneficiary.body.paymentInstructions[0].id;
    // A deposit of the sweep customer's funded account, waiting for its payment.
    const deposit = await http
      .post('/api/operations/deposit')
      .set(customer.auth)
      .set(idem())
      .send(await depositBody(customer, ids.accountId));
    expect(deposit.status, JSON.stringify(deposit.body)).to.equal(201);
    const paid = { amount: { value: '10.00', asset: 'BRL' } };
    const decisions = [
      { who: c, path: `/api/sandbox/accounts/${account.id}/review`, body: { decision: 'APPROVE' } },
      { who: c, path: `/api/sandbox/payment-instructions/${instructionId}/review`, body: { decision: 'APPROVE' } },
      { who: customer, path: `/api/sandbox/operations/${deposit.body.id}/inbound-payment`, body: paid },
    ].map((d) => ({ ...d, key: randomUUID() }));
    const send = (d: (typeof decisions)[number]) =>
      supertest(api.url).post(d.path).set(d.who.auth).set('X-Idempotency-Key', d.key).send(d.body);

    await down();
    try {
      for (const d of decisions) {
        const started = Date.now();
        const res = await send(d).timeout(ANSWER_WITHIN_MS + 10_000);
        const seen = `${d.path}: ${res.status} ${JSON.stringify(res.body)}`;
        if (process.env.SWEEP_PRINT) console.log(`${seen} in ${Date.now() - started} ms`);
        expect(Date.now() - started, seen).to.be.below(ANSWER_WITHIN_MS);
        expect(res.status, seen).to.be.oneOf([200, 503]);
        if (res.status === 503)
          expect(res.headers['retry-after'], seen).to.equal(String(res.body.details.retryAfterSeconds));
      }
    } finally {
      await up();
      await untilReady();
    }
    for (const d of decisions) {
      const retried = await send(d);
      expect(retried.status, `${d.path}: ${JSON.stringify(retried.body)}`).to.equal(200);
    }
    await untilStatus(customer, deposit.body.id, 'COMPLETED');
    expect((await getAccount(c, account.id)).currentState.status).to.equal('ACTIVE');
    const { services } = await stack();
    const recorded = await systemEm(services.orm).execute(
      'select count(*) as n from workflow_decisions where target in (?, ?)',
      [account.id, instructionId],
    );
    expect(Number(recorded[0].n), 'one decision each').to.equal(2);
    const payments = await systemEm(services.orm).execute(
      'select count(*) as n from inbound_payments where operation_id = ?',
      [deposit.body.id],
    );
    expect(Number(payments[0].n), 'one payment recorded').to.equal(1);
  }

  it('Temporal refused: a sandbox decision is 503 or applied; its retry with the key applies it once', () =>
    decisionsAcross(
      () => temporal.cut(),
      () => temporal.open(),
    ));

  it('Temporal stalled: every route answers within the bound, a 503 with Retry-After where it needs it', async () => {
    temporal.stall();
    try {
      const faults = report(await sweep(), () => true);
      expect(faults, faults.join('\n')).to.deep.equal([]);
      await expectPlatformAnswers('temporal');
    } finally {
      temporal.resume();
      await untilReady();
    }
  });

  it('Temporal stalled: a sandbox decision is 503 or applied; its retry with the key applies it once', () =>
    decisionsAcross(
      async () => temporal.stall(),
      async () => temporal.resume(),
    ));
});
