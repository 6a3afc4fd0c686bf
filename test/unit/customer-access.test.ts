import { expect } from 'chai';
import type { Orm } from '../../db/orm';
import { CustomerAccess } from '../../services/customer-access';

const CUSTOMER = '5f0c6f7e-3c1a-4a57-9d6e-2b7f1c0a9e11';

/** An ORM whose customers table is `row`, and whose reads answer only when the test lets them (`release`). */
function slowOrm(row: { disabledAt: Date | null; tokensRevokedAt: Date | null }) {
  const waiting: Array<() => void> = [];
  let reads = 0;
  const em = {
    fork: () => em,
    async findOne() {
      reads += 1;
      // The read's snapshot is taken now; its answer comes back when the test says.
      const seen = { ...row };
      await new Promise<void>((resolve) => waiting.push(resolve));
      return seen;
    },
  };
  const release = () => waiting.splice(0).forEach((resolve) => resolve());
  return { orm: { em } as unknown as Orm, release, reads: () => reads };
}

describe('CustomerAccess (decisions 0024, 0231)', () => {
  it('counts the cache lifetime from the read: a disable is refused within CUSTOMER_CACHE_SECONDS', async () => {
    const row = { disabledAt: null as Date | null, tokensRevokedAt: null as Date | null };
    const db = slowOrm(row);
    let now = 0;
    const access = new CustomerAccess(db.orm, 1, () => now);
    const first = access.admits(CUSTOMER, 0 + 1);
    // The read took 900 ms to come back (a busy host, a stalled connection, a frozen process); the customer was
    // disabled 100 ms after the read began, so the answer it brings is already out of date.
    now = 900;
    row.disabledAt = new Date(100);
    row.tokensRevokedAt = new Date(100);
    db.release();
    expect(await first).to.equal(true);
    // 1.1 s after the disable's read began: past CUSTOMER_CACHE_SECONDS, so asked again.
    now = 1100;
    const second = access.admits(CUSTOMER, 1);
    await Promise.resolve();
    db.release();
    expect(await second).to.equal(false);
    expect(db.reads()).to.equal(2);
  });

  it('with CUSTOMER_CACHE_SECONDS=0 reads for every request, never sharing a read begun before it came', async () => {
    const row = { disabledAt: null as Date | null, tokensRevokedAt: null as Date | null };
    const db = slowOrm(row);
    const now = 0;
    const access = new CustomerAccess(db.orm, 0, () => now);
    const before = access.admits(CUSTOMER, 1);
    // Disabled while that read is on its way back; a request that comes now must see it.
    row.disabledAt = new Date(0);
    row.tokensRevokedAt = new Date(0);
    const after = access.admits(CUSTOMER, 1);
    await Promise.resolve();
    db.release();
    expect(await before).to.equal(true);
    expect(await after).to.equal(false);
    expect(db.reads()).to.equal(2);
  });

  it('answers from the cache within its lifetime, one read for all', async () => {
    const db = slowOrm({ disabledAt: null, tokensRevokedAt: null });
    let now = 0;
    const access = new CustomerAccess(db.orm, 1, () => now);
    const both = Promise.all([access.admits(CUSTOMER, 1), access.admits(CUSTOMER, 1)]);
    db.release();
    expect(await both).to.deep.equal([true, true]);
    now = 999;
    expect(await access.admits(CUSTOMER, 1)).to.equal(true);
    expect(db.reads()).to.equal(1);
  });
});
