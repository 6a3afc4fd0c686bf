import { expect } from 'chai';
import { systemEm, tenantEm } from '../../db/orm';
import { BACKFILL_DAYS_SQL, BACKFILL_MOVEMENTS_SQL } from '../../db/migrations/Migration20261123060000Movements';
import { tagAccount } from '../../services/accounts';
import { Dec } from '../../domain/money';
import { activeAccount } from '../helpers/fixtures';
import { approvedInstruction } from '../helpers/beneficiary-fixtures';
import { fund, quote, untilStatus } from '../helpers/money';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { cambio, cambioFails } from '../helpers/cli';

type Op = {
  id: string;
  account: { id: string };
  intent: { type: string; targetAccount?: { id: string } };
  sourceAmount: { value: string; asset: string; decimals: number };
  targetAmount: { value: string; asset: string; decimals: number };
  currentState: { status: string };
  states: Array<{ status: string; createdAt: string }>;
  tags: Array<{ key: string | null; value: string }>;
};
type Leg = {
  accountId: string;
  asset: string;
  decimals: number;
  direction: 'inflows' | 'outflows';
  value: string;
  at: string;
  tags: Op['tags'];
};

const post = async (c: TestCustomer, kind: string, body: Record<string, unknown>) => {
  const res = await (await stack()).http.post(`/api/operations/${kind}`).set(c.auth).set(idem()).send(body);
  if (res.status !== 201) throw new Error(`${kind} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Op;
};

const report = async (c: TestCustomer, query: Record<string, string>, accept?: string) => {
  const req = (await stack()).http.get('/api/reports').query(query).set(c.auth);
  return accept ? req.set('Accept', accept) : req;
};

/** Every operation the customer can list, through the API, every page. */
async function listOperations(c: TestCustomer): Promise<Op[]> {
  const { http } = await stack();
  const ops: Op[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const res: { status: number; body: { data: Op[]; meta: { nextCursor: string | null } } } = await http
      .get('/api/operations')
      .query({ limit: '100', ...(cursor ? { cursor } : {}) })
      .set(c.auth);
    expect(res.status).to.equal(200);
    ops.push(...res.body.data);
    cursor = res.body.meta.nextCursor;
    if (!cursor) return ops;
  }
  throw new Error('too many pages');
}

/** The movements the decisions describe, computed from the listed operations alone (not from the report's tables). */
function legsOf(ops: Op[]): Leg[] {
  const legs: Leg[] = [];
  for (const op of ops) {
    if (op.currentState.status !== 'COMPLETED') continue;
    const at = op.states.filter((s) => s.status === 'COMPLETED').pop()!.createdAt;
    const out = (): Leg => ({
      accountId: op.account.id,
      asset: op.sourceAmount.asset,
      decimals: op.sourceAmount.decimals,
      direction: 'outflows',
      value: op.sourceAmount.value,
      at,
      tags: op.tags,
    });
    const inTo = (accountId: string): Leg => ({
      accountId,
      asset: op.targetAmount.asset,
      decimals: op.targetAmount.decimals,
      direction: 'inflows',
      value: op.targetAmount.value,
      at,
      tags: op.tags,
    });
    if (op.intent.type === 'DEPOSIT') legs.push(inTo(op.account.id));
    if (op.intent.type === 'WITHDRAWAL') legs.push(out());
    if (op.intent.type === 'SWAP') legs.push(out(), inTo(op.account.id));
    if (op.intent.type === 'TRANSFER') legs.push(out(), inTo(op.intent.targetAccount!.id));
  }
  return legs;
}

/** Expected `totals` for a window and a predicate, summed with decimal arithmetic. */
function expected(legs: Leg[], start: string, end: string, match: (l: Leg) => boolean = () => true) {
  const totals = new Map<string, Record<string, unknown>>();
  for (const l of legs) {
    if (!(l.at >= start && l.at < end && match(l))) continue; // same-format ISO strings order like instants
    const entry = totals.get(l.asset) ?? { asset: l.asset };
    const prev = entry[l.direction] as { sum: { value: string }; count: number } | undefined;
    const sum = new Dec(prev?.sum.value ?? 0).plus(l.value).toFixed(l.decimals);
    entry[l.direction] = { sum: { value: sum, asset: l.asset, decimals: l.decimals }, count: (prev?.count ?? 0) + 1 };
    totals.set(l.asset, entry);
  }
  return [...totals.values()].sort((a, b) => ((a.asset as string) < (b.asset as string) ? -1 : 1));
}

const hasTag = (key: string | null, value?: string) => (l: Leg) =>
  l.tags.some((t) => (value === undefined ? t.key === key : t.value === value));

const iso = (ms: number) => new Date(ms).toISOString();
const dayStart = (ms: number) => iso(Math.floor(ms / 86_400_000) * 86_400_000);

describe('reports', function () {
  this.timeout(240000);

  let c: TestCustomer;
  let a: string;
  let b: string;
  let legs: Leg[];
  let ops: Op[];
  let from: string;
  let to: string;

  before(async () => {
    const { http, services } = await stack();
    c = await newCustomer('Reports Ltda');
    from = iso(Date.now() - 1000);
    a = (await activeAccount(c, ['BRL', 'USD', 'USDC'])).id;
    b = (await activeAccount(c, ['BRL', 'USD'])).id;
    const em = () => tenantEm(services.orm, c.customerId);
    await tagAccount(em(), a, { key: 'region', value: 'latam', propagate: true });
    await tagAccount(em(), b, { key: 'team', value: 'ops', propagate: true });

    // Deposits: BRL by PIX, USD bought with BRL (FX), USDC by crypto.
    await fund(c, a, 'BRL', '1000.00');
    await fund(c, a, 'USD', '100.00');
    await fund(c, a, 'USDC', '50.500000');
    await fund(c, b, 'BRL', '20.05');
    // A swap BRL → USD on A, a transfer A → B, a withdrawal from A.
    const q = await quote(c, { accountId: a, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '300.00' });
    const swap = await post(c, 'swap', { accountId: a, quoteId: q.id });
    const transfer = await post(c, 'transfer', {
      sourceAccountId: a,
      targetAccountId: b,
      amount: { value: '200.10', asset: 'BRL' },
    });
    const { beneficiaryId, instructionId } = await approvedInstruction(c, {
      dictKeyType: 'EMAIL',
      dictKey: 'maria@example.com',
    });
    const wq = await quote(c, { accountId: a, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '99.99' });
    const withdrawal = await post(c, 'withdrawal', {
      accountId: a,
      quoteId: wq.id,
      beneficiary: {
        type: 'REFERENCE',
        id: beneficiaryId,
        paymentInstruction: { type: 'REFERENCE', id: instructionId },
      },
    });
    for (const op of [swap, transfer, withdrawal]) await untilStatus(c, op.id, 'COMPLETED');

    // A deposit that fails (wrong amount), one replayed to COMPLETED after failing, one never paid.
    const pay = (id: string, value: string) =>
      http
        .post(`/api/sandbox/operations/${id}/inbound-payment`)
        .set(c.auth)
        .set(idem())
        .send({ amount: { value, asset: 'BRL' } });
    const deposit = async (value: string) => {
      const dq = await quote(c, { accountId: b, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
      return post(c, 'deposit', { accountId: b, quoteId: dq.id, fundingInstruction: { rail: 'PIX_KEY' } });
    };
    const failed = await deposit('70.00');
    expect((await pay(failed.id, '69.00')).status).to.equal(200);
    await untilStatus(c, failed.id, 'FAILED');
    const replayed = await deposit('33.33');
    expect((await pay(replayed.id, '30.00')).status).to.equal(200);
    await untilStatus(c, replayed.id, 'FAILED');
    expect((await pay(replayed.id, '3.33')).status).to.equal(200);
    const { replayDeposit } = await import('../../services/operations/signals');
    await replayDeposit(services, em(), replayed.id, 'operator:test');
    await untilStatus(c, replayed.id, 'COMPLETED');
    await deposit('5.00');

    to = iso(Date.now() + 1000);
    ops = await listOperations(c);
    legs = legsOf(ops);
  });

  it('sums every settled movement of the window per asset and direction, transfers on both sides', async () => {
    expect(ops.map((o) => o.currentState.status).sort()).to.include.members(['FAILED', 'REQUESTED']);
    const res = await report(c, { periodStart: from, periodEnd: to });
    expect(res.status).to.equal(200);
    expect(res.body.period).to.deep.equal({ start: from, end: to });
    expect(res.body.totals).to.deep.equal(expected(legs, from, to));
    // Hand-checked figures of the history above, beside the independent computation.
    const brl = res.body.totals.find((t: { asset: string }) => t.asset === 'BRL');
    expect(brl.inflows).to.deep.equal({ sum: { value: '1253.48', asset: 'BRL', decimals: 2 }, count: 4 });
    expect(res.body.totals.map((t: { asset: string }) => t.asset)).to.deep.equal(['BRL', 'USD', 'USDC']);
    expect(res.body.totals.find((t: { asset: string }) => t.asset === 'USDC')).to.deep.equal({
      asset: 'USDC',
      inflows: { sum: { value: '50.500000', asset: 'USDC', decimals: 6 }, count: 1 },
    });
  });

  it('counts a movement at the moment its operation completed: start inclusive, end exclusive', async () => {
    const times = [...new Set(legs.map((l) => l.at))].sort();
    const mid = times[Math.floor(times.length / 2)];
    const late = times[times.length - 2];
    for (const [start, end] of [
      [from, mid],
      [mid, to],
      [mid, late],
      [late, to],
      [mid, iso(Date.parse(mid) + 1)],
    ]) {
      const res = await report(c, { periodStart: start, periodEnd: end });
      expect(res.status).to.equal(200);
      expect(res.body.totals, `[${start}, ${end})`).to.deep.equal(expected(legs, start, end));
    }
    // A bound between two milliseconds reads from the next one, and the period says so (movements are stamped in ms).
    const justAfterMid = mid.replace('Z', '001Z');
    const next = iso(Date.parse(mid) + 1);
    const between = await report(c, { periodStart: justAfterMid, periodEnd: to });
    expect(between.body).to.deep.equal({ period: { start: next, end: to }, totals: expected(legs, next, to) });
    const empty = await report(c, { periodStart: iso(Date.parse(from) - 86_400_000), periodEnd: from });
    expect(empty.body).to.deep.equal({ period: { start: iso(Date.parse(from) - 86_400_000), end: from }, totals: [] });
  });

  it('agrees over whole days (daily totals) and across day edges', async () => {
    const day = dayStart(Date.parse(from));
    const windows = [
      [iso(Date.parse(day) - 86_400_000), iso(Date.parse(day) + 2 * 86_400_000)], // whole days only
      [iso(Date.parse(from) - 3 * 86_400_000 + 1234), iso(Date.parse(to) + 86_400_000 + 5)], // edges around whole days
      [day, iso(Date.parse(legs[3].at) + 1)], // from midnight to an instant
    ];
    for (const [start, end] of windows) {
      const cases: Array<[string | undefined, (l: Leg) => boolean]> = [
        [undefined, () => true],
        [`account.id[eq]=${b}`, (l) => l.accountId === b],
        ['asset[eq]=BRL', (l) => l.asset === 'BRL'],
        ['tags.key[eq]=team', hasTag('team')],
        [
          `or(tags.value[eq]=latam,and(asset[eq]=BRL,account.id[eq]=${b}))`,
          (l) => hasTag(null, 'latam')(l) || (l.asset === 'BRL' && l.accountId === b),
        ],
      ];
      for (const [filters, match] of cases) {
        const res = await report(c, { periodStart: start, periodEnd: end, ...(filters ? { filters } : {}) });
        expect(res.body.totals, `[${start}, ${end}) ${filters}`).to.deep.equal(expected(legs, start, end, match));
      }
    }
  });

  it('filters by account, asset and the operation tags, in any combination', async () => {
    const cases: Array<[string, (l: Leg) => boolean]> = [
      [`account.id[eq]=${a}`, (l) => l.accountId === a],
      [`account.id[eq]=${b.toUpperCase()}`, (l) => l.accountId === b],
      ['asset[eq]=USD', (l) => l.asset === 'USD'],
      ['tags.key[eq]=region', hasTag('region')],
      ['tags.value[eq]=ops', hasTag(null, 'ops')],
      ['tags.value[eq]=nothing', () => false],
      [`account.id[eq]=${b};asset[eq]=BRL`, (l) => l.accountId === b && l.asset === 'BRL'],
      [`and(account.id[eq]=${a},tags.key[eq]=region)`, (l) => l.accountId === a && hasTag('region')(l)],
      [`or(asset[eq]=USDC,account.id[eq]=${b})`, (l) => l.asset === 'USDC' || l.accountId === b],
      [
        `or(tags.value[eq]=ops,and(asset[eq]=USD,account.id[eq]=${a}))`,
        (l) => hasTag(null, 'ops')(l) || (l.asset === 'USD' && l.accountId === a),
      ],
    ];
    for (const [filters, match] of cases) {
      const res = await report(c, { periodStart: from, periodEnd: to, filters });
      expect(res.status, filters).to.equal(200);
      expect(res.body.totals, filters).to.deep.equal(expected(legs, from, to, match));
    }
    // The transfer's inflow on B carries the operation's tags (A's), not B's.
    const transferIn = await report(c, {
      periodStart: from,
      periodEnd: to,
      filters: `account.id[eq]=${b};tags.key[eq]=region`,
    });
    expect(transferIn.body.totals).to.deep.equal([
      { asset: 'BRL', inflows: { sum: { value: '200.10', asset: 'BRL', decimals: 2 }, count: 1 } },
    ]);
  });

  it('answers the same report as CSV with Accept: text/csv', async () => {
    const json = (await report(c, { periodStart: from, periodEnd: to })).body;
    const res = await report(c, { periodStart: from, periodEnd: to }, 'text/csv');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).to.match(
      /^attachment; filename="cambio-report-\d{8}T\d{6}(\.\d{3})?Z-\d{8}T\d{6}(\.\d{3})?Z\.csv"$/,
    );
    const rows = res.text.split('\r\n');
    expect(rows.pop()).to.equal('');
    const fromJson = ['asset,direction,sum,count'];
    for (const t of json.totals) {
      if (t.inflows) fromJson.push(`${t.asset},INFLOW,${t.inflows.sum.value},${t.inflows.count}`);
      if (t.outflows) fromJson.push(`${t.asset},OUTFLOW,${t.outflows.sum.value},${t.outflows.count}`);
    }
    expect(rows).to.deep.equal(fromJson);
    expect(rows.length).to.be.greaterThan(3);
    const none = await report(c, { periodStart: to, periodEnd: iso(Date.parse(to) + 1000) }, 'text/csv');
    expect(none.text).to.equal('asset,direction,sum,count\r\n');
    const bad = await report(c, { periodStart: to, periodEnd: to }, 'text/csv');
    expect(bad.status).to.equal(400);
    expect(bad.body.code).to.equal('INVALID_PERIOD');
    const { http } = await stack();
    const documented = (await http.get('/openapi.json')).body.paths['/api/reports'].get.responses['200'].content;
    expect(documented).to.have.all.keys('application/json', 'text/csv');
  });

  it("never shows another customer's movements", async () => {
    const other = await newCustomer('Other Ltda');
    const mine = await activeAccount(other, ['BRL']);
    await fund(other, mine.id, 'BRL', '7.00');
    const res = await report(other, { periodStart: from, periodEnd: iso(Date.now() + 1000) });
    expect(res.body.totals).to.deep.equal([
      { asset: 'BRL', inflows: { sum: { value: '7.00', asset: 'BRL', decimals: 2 }, count: 1 } },
    ]);
    const theirs = await report(other, { periodStart: from, periodEnd: to, filters: `account.id[eq]=${a}` });
    expect(theirs.status).to.equal(200);
    expect(theirs.body.totals).to.deep.equal([]);
    const still = await report(c, { periodStart: from, periodEnd: to });
    expect(still.body.totals).to.deep.equal(expected(legs, from, to));
  });

  it('rejects missing or malformed periods, an end not after the start, and other filters', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ periodEnd: to }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: from }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: '2026-11-01', periodEnd: to }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: '2026-11-01T00:00:00+00:00', periodEnd: to }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: '2026-02-30T00:00:00Z', periodEnd: to }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: from, periodEnd: 'tomorrow' }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: from, periodEnd: to, extra: '1' }, 400, 'VALIDATION_ERROR'],
      [{ periodStart: to, periodEnd: from }, 400, 'INVALID_PERIOD'],
      [{ periodStart: from, periodEnd: from }, 400, 'INVALID_PERIOD'],
      [{ periodStart: from, periodEnd: to, filters: 'asset[ne]=BRL' }, 400, 'INVALID_FILTER'],
      [{ periodStart: from, periodEnd: to, filters: 'asset[in]=BRL|USD' }, 400, 'INVALID_FILTER'],
      [{ periodStart: from, periodEnd: to, filters: 'currentState.status[eq]=COMPLETED' }, 400, 'INVALID_FILTER'],
      [{ periodStart: from, periodEnd: to, filters: 'account.id[eq]=nope' }, 400, 'INVALID_FILTER'],
      [{ periodStart: from, periodEnd: to, filters: 'or(asset[eq]=BRL' }, 400, 'INVALID_FILTER'],
    ];
    for (const [query, status, code] of cases) {
      const res = await report(c, query);
      expect(res.status, JSON.stringify(query)).to.equal(status);
      expect(res.body.code, JSON.stringify(query)).to.equal(code);
    }
    const missing = await report(c, { periodEnd: to });
    expect(missing.body.details.errors[0].path).to.equal('/query/periodStart');
    const anonymous = await (await stack()).http.get('/api/reports').query({ periodStart: from, periodEnd: to });
    expect(anonymous.status).to.equal(401);
  });

  it('gives operators the same report from `cambio report` (JSON, CSV, table)', async () => {
    const filters = `account.id[eq]=${b}`;
    const api = await report(c, { periodStart: from, periodEnd: to, filters });
    const json = await cambio(
      'report',
      '--customer',
      c.customerId,
      '--from',
      from,
      '--to',
      to,
      '--filters',
      filters,
      '--json',
    );
    expect(JSON.parse(json.stdout)).to.deep.equal(api.body);
    const csv = await cambio('report', '--customer', c.customerId, '--from', from, '--to', to, '--csv');
    expect(csv.stdout).to.equal((await report(c, { periodStart: from, periodEnd: to }, 'text/csv')).text);
    const human = await cambio('report', '--customer', c.customerId, '--from', from, '--to', to);
    expect(human.stdout).to.match(
      /^period .* \(end exclusive\)\nasset +direction +sum +count\nBRL +INFLOW +1253\.48 +4\n/,
    );
    const failure = await cambioFails('report', '--customer', c.customerId, '--from', to, '--to', from);
    expect(failure.exitCode).to.equal(1);
    expect(failure.body.code).to.equal('INVALID_PERIOD');
  });

  it('rebuilds from the operations, in the migration, exactly what the write path recorded', async () => {
    const { services } = await stack();
    const movements =
      `select operation_id, account_id, asset, direction, amount::text, completed_at, tags from movements ` +
      `where customer_id = ? order by 1, 2, 3, 4`;
    const days =
      `select day::text, account_id, asset, direction, tags, sum::text, count::text from movement_days ` +
      `where customer_id = ? order by 1, 2, 3, 4, 5`;
    const em = systemEm(services.orm);
    const recorded = {
      movements: await em.execute(movements, [c.customerId]),
      days: await em.execute(days, [c.customerId]),
    };
    expect(recorded.movements).to.have.length(legs.length);
    // Inside a transaction that is rolled back: the other tests never see this customer's rows missing.
    const rebuilt = await em
      .transactional(async (tx) => {
        await tx.execute('delete from movements where customer_id = ?', [c.customerId]);
        await tx.execute('delete from movement_days where customer_id = ?', [c.customerId]);
        await tx.execute(BACKFILL_MOVEMENTS_SQL);
        await tx.execute(BACKFILL_DAYS_SQL);
        const out = {
          movements: await tx.execute(movements, [c.customerId]),
          days: await tx.execute(days, [c.customerId]),
        };
        throw Object.assign(new Error('rollback'), { out });
      })
      // Only the rollback carries `out`: any other error is the rebuild's, and the test's answer.
      .catch((err: { out?: unknown }) => {
        if (!err.out) throw err;
        return err.out;
      });
    const numeric = (rows: Array<Record<string, unknown>>) =>
      rows.map((r) => ({
        ...r,
        amount: r.amount && new Dec(r.amount as string).toFixed(),
        sum: r.sum && new Dec(r.sum as string).toFixed(),
      }));
    const r = rebuilt as typeof recorded;
    expect(numeric(r.movements)).to.deep.equal(numeric(recorded.movements));
    expect(numeric(r.days)).to.deep.equal(numeric(recorded.days));
    expect((await em.execute(movements, [c.customerId])).length).to.equal(legs.length);
  });

  it('never shows half of a transfer while transfers settle', async () => {
    const { http } = await stack();
    const d = await newCustomer('Busy Ltda');
    const x = (await activeAccount(d, ['BRL'])).id;
    const y = (await activeAccount(d, ['BRL'])).id;
    await fund(d, x, 'BRL', '1000.00');
    const startMs = Date.now() + 1;
    const start = iso(startMs);
    // Every transfer must fall inside the period: let the clock pass its start.
    await eventually(
      async () => Date.now(),
      (now) => now > startMs,
      1000,
      1,
    );
    const transfers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(d, 'transfer', { sourceAccountId: x, targetAccountId: y, amount: { value: `${i + 1}.01`, asset: 'BRL' } }),
      ),
    );
    const end = iso(Date.now() + 60_000);
    let readsWhileSettling = 0;
    let settled = false;
    const watcher = (async () => {
      for (let i = 0; i < 400 && !settled; i++) {
        const res = await http.get('/api/reports').query({ periodStart: start, periodEnd: end }).set(d.auth);
        expect(res.status).to.equal(200);
        const brl = res.body.totals[0];
        if (!brl) continue;
        expect(brl.inflows?.count, JSON.stringify(brl)).to.equal(brl.outflows?.count);
        expect(brl.inflows?.sum, JSON.stringify(brl)).to.deep.equal(brl.outflows?.sum);
        if (!settled) readsWhileSettling++;
      }
    })();
    await Promise.all(transfers.map((t) => untilStatus(d, t.id, 'COMPLETED')));
    settled = true;
    await watcher;
    const final = await http.get('/api/reports').query({ periodStart: start, periodEnd: end }).set(d.auth);
    const sum = transfers.reduce((s, _, i) => s.plus(`${i + 1}.01`), new Dec(0)).toFixed(2);
    const both = { sum: { value: sum, asset: 'BRL', decimals: 2 }, count: 12 };
    expect(final.body.totals).to.deep.equal([{ asset: 'BRL', inflows: both, outflows: both }]);
    expect(readsWhileSettling, 'reports read with both sides while transfers settled').to.be.greaterThan(0);
  });
});
