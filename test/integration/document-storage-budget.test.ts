// Every onboarding document is kept and none is deleted, so a customer's documents have a storage budget,
// DOCUMENT_STORAGE_PER_CUSTOMER_MB, counted over all its accounts under the customer's lock (decision 0350).
import { expect } from 'chai';
import { createAccount, documentBody } from '../helpers/fixtures';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

const MIB = 1024 * 1024;

/** A CERTIFICATE_OF_INCORPORATION of `mib` MiB for the account. */
async function upload(c: TestCustomer, accountId: string, mib: number) {
  const { http } = await stack();
  const content = Buffer.alloc(mib * MIB, 7).toString('base64');
  return http
    .post(`/api/accounts/${accountId}/documents`)
    .set(c.auth)
    .set(idem())
    .send(documentBody('CERTIFICATE_OF_INCORPORATION', undefined, content));
}

describe("a customer's documents have a storage budget", function () {
  this.timeout(120000);

  it('refuses an upload past it (422, nothing stored), racing ones too; another customer is not counted', async () => {
    const { config } = await stack();
    const before = config.documentStoragePerCustomerMb;
    // The stack's config is read at each upload.
    config.documentStoragePerCustomerMb = 10;
    try {
      const c = await newCustomer();
      const [a, b] = [(await createAccount(c)).id, (await createAccount(c)).id];
      expect((await upload(c, a, 4)).status).to.equal(201);
      // Two uploads of 4 MiB at once, on two accounts: one fits (8 of 10 MiB), the other does not.
      const raced = await Promise.all([upload(c, a, 4), upload(c, b, 4)]);
      expect(raced.map((r) => r.status).sort()).to.deep.equal([201, 422]);
      const refused = raced.find((r) => r.status === 422)!;
      expect(refused.body.code).to.equal('DOCUMENT_STORAGE_LIMIT_REACHED');
      expect(refused.body.details).to.deep.equal({ limitBytes: 10 * MIB, usedBytes: 8 * MIB });
      // What still fits is taken; the refused upload stored nothing.
      expect((await upload(c, b, 2)).status).to.equal(201);
      const full = await upload(c, b, 1);
      expect([full.status, full.body.details]).to.deep.equal([422, { limitBytes: 10 * MIB, usedBytes: 10 * MIB }]);
      // Another customer's budget is its own.
      const other = await newCustomer();
      expect((await upload(other, (await createAccount(other)).id, 4)).status).to.equal(201);
    } finally {
      config.documentStoragePerCustomerMb = before;
    }
  });
});
