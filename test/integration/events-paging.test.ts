import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { tenantEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { recordEvent } from '../../db/repositories/events';
import { beneficiaryBody } from '../helpers/beneficiary-fixtures';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

type Event = { id: string; type: string; createdAt: string };

/** A poller as docs/webhooks.md describes it: every event recorded after the newest one it has already seen. */
async function eventsAfter(c: TestCustomer, createdAt: string | null): Promise<Event[]> {
  const { http } = await stack();
  const res = await http
    .get('/api/events')
    .query({ sortOrder: 'ASCENDING', limit: '100', ...(createdAt ? { filters: `createdAt[gt]=${createdAt}` } : {}) })
    .set(c.auth);
  expect(res.status).to.equal(200);
  return res.body.data;
}

describe('events API: a poller misses nothing', function () {
  this.timeout(60_000);

  it('lists an event whose transaction commits after a newer event was read, after that event', async () => {
    const { http, services, config } = await stack();
    const c = await newCustomer();
    // A transaction that records an event and commits late (a slow activity, a lock wait after the event's row).
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let recorded!: () => void;
    const inside = new Promise<void>((resolve) => (recorded = resolve));
    const late = inTransaction(tenantEm(services.orm, c.customerId), async (tx) => {
      await recordEvent(tx, config, {
        customerId: c.customerId,
        type: 'ASSET_ACTIVATED',
        resourceType: 'ASSET',
        resourceId: randomUUID(),
        payload: { customerId: c.customerId, late: true },
        dedupeKey: `${randomUUID()}:LATE`,
        atTime: new Date(),
      });
      recorded();
      await held;
    });
    await inside;
    await new Promise((r) => setTimeout(r, 20));
    // Meanwhile another event commits, and the poller reads it.
    expect((await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody())).status).to.equal(
      201,
    );
    const first = await eventsAfter(c, null);
    expect(first.map((e) => e.type)).to.deep.equal(['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED']);

    commit();
    await late;
    const next = await eventsAfter(c, first[first.length - 1].createdAt);
    expect(next.map((e) => e.type)).to.deep.equal(['ASSET_ACTIVATED']);
  });
});
