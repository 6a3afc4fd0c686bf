// Admission per customer, seen from one API: past MAX_PENDING_OPERATIONS_PER_CUSTOMER accepted-but-not-started
// operations a new request is 429 RATE_LIMITED, while a key that already has its answer is still replayed, a key
// held by a live request is 409, and a refused deposit leaves no charge at the PSP. The relay is stopped, so nothing
// starts and the backlog only grows.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { tenantEm } from '../../db/orm';
import { advisoryLockId } from '../../db/repositories/idempotency';
import { txidFor } from '../../rails/pix/ids';
import { activeAccount } from '../helpers/fixtures';
import { fund, quote, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack, withoutRelay, type TestCustomer } from '../helpers/stack';

const BOUND = 3;

describe('admission per customer: the backlog bound', function () {
  this.timeout(60_000);
  let c: TestCustomer;
  let from: string;
  let to: string;
  let savedBound: number;

  before(async () => {
    const { config } = await stack();
    savedBound = config.maxPendingOperationsPerCustomer;
    c = await newCustomer('Backlog Bound Ltda');
    [from, to] = [(await activeAccount(c, ['BRL'])).id, (await activeAccount(c, ['BRL'])).id];
    await fund(c, from, 'BRL', '100.00');
  });
  after(async () => {
    (await stack()).config.maxPendingOperationsPerCustomer = savedBound;
  });

  const transferBody = (value = '1.00') => ({
    sourceAccountId: from,
    targetAccountId: to,
    amount: { value, asset: 'BRL' },
  });
  const post = async (path: string, body: object, key: string) =>
    (await stack()).http.post(path).set(c.auth).set('X-Idempotency-Key', key).send(body);

  it('refuses past the bound, replays an answered key, 409s a held one, charges no refused deposit', async () => {
    const { config, psp } = await stack();
    config.maxPendingOperationsPerCustomer = BOUND;
    const first = { key: randomUUID(), body: transferBody() };
    const refusedKey = randomUUID();
    const refusedBody = transferBody();
    const accepted: string[] = [];
    await withoutRelay(async () => {
      for (let i = 0; i < BOUND; i++) {
        const [body, key] = i === 0 ? [first.body, first.key] : [transferBody(), randomUUID()];
        const res = await post('/api/operations/transfer', body, key);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        accepted.push(res.body.id);
      }
      // Refused twice over: first in the request's transaction, then (the customer refused a moment ago) by the
      // read in front of it. The same answer both times, with an honest wait.
      for (let i = 0; i < 2; i++) {
        const refused = await post('/api/operations/transfer', refusedBody, refusedKey);
        expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
        expect(refused.body.code).to.equal('RATE_LIMITED');
        expect(Number(refused.headers['retry-after'])).to.be.within(1, 60);
        expect(refused.body.details).to.deep.include({ pendingOperations: BOUND });
      }

      // A key that a live request holds (its lock taken, nothing committed) is a concurrent duplicate, bound or not:
      // 409, the transaction's answer, from the read in front of it too. Then, let go, the key is refused again.
      const { services } = await stack();
      const heldKey = randomUUID();
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let held!: () => void;
      const holding = new Promise<void>((r) => (held = r));
      const live = tenantEm(services.orm, c.customerId).transactional(async (tx) => {
        await tx.execute('select pg_advisory_xact_lock(?::bigint)', [advisoryLockId(c.customerId, heldKey)]);
        held();
        await released;
      });
      try {
        await holding;
        const duplicate = await post('/api/operations/transfer', refusedBody, heldKey);
        expect(duplicate.status, JSON.stringify(duplicate.body)).to.equal(409);
        expect(duplicate.body.code).to.equal('IDEMPOTENCY_KEY_IN_USE');
      } finally {
        release();
        await live;
      }
      const letGo = await post('/api/operations/transfer', refusedBody, heldKey);
      expect(letGo.status, JSON.stringify(letGo.body)).to.equal(429);

      // The first request's retry is not a new operation: it is replayed, bound or not.
      const replay = await post('/api/operations/transfer', first.body, first.key);
      expect(replay.status, JSON.stringify(replay.body)).to.equal(201);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body.id).to.equal(accepted[0]);
      // Its key with another body is still the key's misuse, not a full backlog.
      const reused = await post('/api/operations/transfer', transferBody('2.00'), first.key);
      expect(reused.status, JSON.stringify(reused.body)).to.equal(422);
      expect(reused.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');

      // A PIX deposit past the bound is refused before its charge is created: nothing is left at the PSP.
      const q = await quote(c, { accountId: from, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' });
      const depositKey = randomUUID();
      const deposit = await post(
        '/api/operations/deposit',
        { accountId: from, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } },
        depositKey,
      );
      expect(deposit.status, JSON.stringify(deposit.body)).to.equal(429);
      const charges = (await psp.control('GET', '/state')).body.charges;
      expect(charges).to.not.have.property(txidFor(c.customerId, depositKey, q.id));
    });

    // The relay back: the backlog drains, and the refused key, sent again, is accepted (a 429 is not stored).
    for (const id of accepted) await untilStatus(c, id, 'COMPLETED');
    const retried = await eventually(
      () => post('/api/operations/transfer', refusedBody, refusedKey),
      (res) => res.status === 201,
      20_000,
      200,
    );
    expect(retried.headers['idempotent-replayed']).to.equal(undefined);
    await untilStatus(c, retried.body.id, 'COMPLETED');
  });
});
