// `cambio books check` reads the records and the ledger in one snapshot (decision 0080: it never reports a difference
// that concurrent recording made up). The check runs in a loop while payments are recorded, returned and credited
// concurrently; every difference it reports would be a real one, so a later quiet check would confirm it, and none
// does. Read in separate transactions, a payment committed between the reads would show as
// `received: records != ledger` or `suspense: ... != ledger balance`, and the check would exit 1.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { creditPayment, returnPayment } from '../../services/inbound-payment-resolution';
import { checkBooks } from '../../payments/books-check';
import { decideInboundPayment, recordInboundPayment } from '../../payments/record-and-decide';
import { Dec } from '../../domain/money';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced } from '../helpers/money';
import { cambio } from '../helpers/cli';
import { newCustomer, stack } from '../helpers/stack';

// USDT: a payment another test of the same shard left in it (crypto-deposits.test.ts) is counted before this test
// writes, and its totals are read on top of those.
const ASSET = 'USDT';
const WRITERS = 6;
const PAYMENTS_PER_WRITER = 15;
const CHECKERS = 2;

describe('cambio books check: one snapshot', function () {
  this.timeout(300000);

  it('never reports a difference while payments are recorded and returned concurrently', async () => {
    const { services } = await stack();
    const c = await newCustomer('Books Snapshot Ltda');
    const account = await activeAccount(c, [ASSET]);
    const before = (await checkBooks(systemEm(services.orm), ASSET)).assets[0]?.records;
    const heldBefore = (field: 'unmatched' | 'suspense') => new Dec(before?.[field] ?? 0);

    // An operator records a CRYPTO payment for the customer: UNMATCHED in its suspense; then returns it at the bank
    // (RETURNING, then RETURNED: two commits; no node here) or credits it to the account.
    const writer = async (w: number) => {
      for (let i = 0; i < PAYMENTS_PER_WRITER; i++) {
        const payment = await recordInboundPayment(systemEm(services.orm), {
          endToEndId: `0x${randomUUID().replace(/-/g, '')}`,
          amount: new Dec(`${w + 1}.${String(i).padStart(2, '0')}`),
          asset: ASSET,
          customerId: c.customerId,
          rail: 'CRYPTO',
        });
        await decideInboundPayment(services, payment);
        if (i % 3 === 2) await creditPayment(services, payment.id, account.id);
        else if (i % 3 === 1)
          await returnPayment(services, payment.id, 'snapshot race', undefined, { reference: `BANK-${w}-${i}` });
      }
    };

    let writing = true;
    let checks = 0;
    const reported: string[] = [];
    const checker = async () => {
      while (writing) {
        const books = await checkBooks(systemEm(services.orm), ASSET);
        checks++;
        if (!books.ok) reported.push(...books.assets.flatMap((a) => a.differences));
      }
    };
    const checking = Array.from({ length: CHECKERS }, checker);
    try {
      await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    } finally {
      writing = false;
      await Promise.all(checking);
    }

    // Quiet: the books close, so no difference reported above was real.
    const quiet = await checkBooks(systemEm(services.orm), ASSET);
    expect(quiet.ok, JSON.stringify(quiet.assets)).to.equal(true);
    const [books] = quiet.assets;
    // Each writer's payments 0, 3, 6, 9 and 12 stay UNMATCHED: (w + 1) × 5 + 0.30 for writer w.
    const unmatched = Array.from({ length: WRITERS }, (_, w) => new Dec(w + 1).times(5).plus('0.30'));
    const held = unmatched.reduce((s, v) => s.plus(v), new Dec(0));
    expect(books.records).to.deep.include({
      unmatched: held.plus(heldBefore('unmatched')).toFixed(6),
      suspense: held.plus(heldBefore('suspense')).toFixed(6),
    });
    expect(checks, 'the check ran while they were recorded').to.be.at.least(20);
    expect(reported, `${reported.length} differences reported over ${checks} checks`).to.deep.equal([]);

    // The operator's command says the same.
    const ran = JSON.parse((await cambio('books', 'check', '--asset', ASSET, '--json')).stdout);
    expect(ran.ok).to.equal(true);
    await assertLedgerBalanced();
  });
});
