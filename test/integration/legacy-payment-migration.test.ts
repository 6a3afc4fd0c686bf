// The inbound payment facts migration (Migration20261126300000InboundPaymentFacts) over rows shaped as the code
// before it left them, on a database of its own migrated to just before it: a deposit settled from the rail's world
// book before the suspense existed, and overpaid; payments counted toward deposits that FAILED, one past its replay
// window and one not; a payment nobody decided; an operator's credit that overwrote the deposit it arrived for; a
// split that overwrote the amount received. Then every migration up, and each row is in its true state, the suspense
// holds what the records say and `cambio books check`'s figures agree.
import { Migrator } from '@mikro-orm/migrations';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { openOrm, type Orm } from '../../db/orm';
import { checkBooks } from '../../payments/books-check';
import { suspenseAccountId } from '../../domain/postings';

const { createDatabase, dropDatabase, withDatabase } = require('../../scripts/lib/postgres');

const BEFORE = 'Migration20261126200001IssuedStatements';
const DAY = 86400_000;

describe('the inbound payment facts migration over rows the old code left', function () {
  this.timeout(120000);
  const url: string = withDatabase(process.env.DATABASE_URL!, `cambio_legacy_${process.pid}_${Date.now()}`);
  let orm: Orm;
  const sql = (text: string, params: unknown[] = []) => orm.em.fork().execute(text, params);

  before(async () => {
    await createDatabase(url);
    orm = await openOrm(url, { poolMax: 2, extensions: [Migrator] });
    await orm.getMigrator().up({ to: BEFORE });
    const pending = (await orm.getMigrator().getPendingMigrations()).map((m) => m.name);
    expect(pending[0]).to.equal('Migration20261126300000InboundPaymentFacts');
  });

  after(async () => {
    await orm?.close(true);
    await dropDatabase(url);
  });

  it('puts every old row in its true state, and the books close', async () => {
    const customerId = randomUUID();
    const accountId = randomUUID();
    const suspenseBook = `suspense:${customerId}`;
    await sql(`insert into customers (id, name, created_at) values (?, 'Legacy Ltda', now())`, [customerId]);

    const ago = (ms: number) => new Date(Date.now() - ms);
    const deposit = async (value: string, status: string, reason: string | null, updatedAt: Date, extra = {}) => {
      const id = randomUUID();
      const states = [
        { status: 'REQUESTED', createdAt: ago(40 * DAY).toISOString() },
        {
          status,
          createdAt: updatedAt.toISOString(),
          ...(reason ? { reason: { code: reason, message: reason } } : {}),
        },
      ];
      const intent = { type: 'DEPOSIT', fundingInstruction: { rail: 'PIX_KEY' }, ...extra };
      await sql(
        `insert into operations (id, customer_id, account_id, type, status, states, intent, quote_id, source_asset,
           source_amount, target_asset, target_amount, fees, transactions, tags, created_at, updated_at)
         values (?, ?, ?, 'DEPOSIT', ?, ?::jsonb, ?::jsonb, ?, 'BRL', ?, 'BRL', ?, '[]', '[]', '[]', ?, ?)`,
        [
          id,
          customerId,
          accountId,
          status,
          JSON.stringify(states),
          JSON.stringify(intent),
          randomUUID(),
          value,
          value,
          ago(40 * DAY),
          updatedAt,
        ],
      );
      return id;
    };
    let order = 0;
    const payment = async (p: {
      operationId: string;
      amount: string;
      status: string;
      decided?: boolean;
      remainderOf?: string;
      endToEndId?: string;
    }) => {
      const id = randomUUID();
      // Oldest first, a second apart: the allocation goes by arrival.
      const at = new Date(Date.now() - 30 * DAY + 1000 * order++);
      await sql(
        `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
           status, decided, remainder_of, created_at, updated_at)
         values (?, ?, ?, ?, ?, 'BRL', 'PIX_KEY', ?, ?, ?, ?, ?, ?)`,
        [
          id,
          p.operationId,
          customerId,
          accountId,
          p.amount,
          p.endToEndId ?? `E${id.replace(/-/g, '')}`,
          p.status,
          p.decided ?? true,
          p.remainderOf ?? null,
          at,
          at,
        ],
      );
      return id;
    };
    const posting = async (key: string, operationId: string | null, legs: Array<[string | null, string, string]>) => {
      const tx = randomUUID();
      await sql(
        `insert into ledger_transactions (id, key, operation_id, description, created_at)
                 values (?, ?, ?, 'old code', now())`,
        [tx, key, operationId],
      );
      for (const [account, book, amount] of legs) {
        await sql(
          `insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at)
                   values (?, ?, ?, ?, 'BRL', ?, now())`,
          [randomUUID(), tx, account, book, amount],
        );
      }
    };

    // A: completed before the suspense existed, settled from the world book; paid 70 + 50 for 100.
    const a = await deposit('100.00', 'COMPLETED', null, ago(30 * DAY));
    await posting(`${a}:settle`, a, [
      [null, 'world:pix', '-100'],
      [accountId, 'available', '100'],
    ]);
    const a1 = await payment({ operationId: a, amount: '70.00', status: 'MATCHED' });
    const a2 = await payment({ operationId: a, amount: '50.00', status: 'MATCHED' });
    // B: FAILED short long ago (past any replay window): the old migration called its payment MATCHED.
    const b = await deposit('100.00', 'FAILED', 'AMOUNT_MISMATCH', ago(30 * DAY));
    const b1 = await payment({ operationId: b, amount: '40.00', status: 'MATCHED' });
    // C: expired, with a payment the old migration also called MATCHED.
    const c = await deposit('9.00', 'FAILED', 'DEPOSIT_EXPIRED', ago(60_000));
    const c1 = await payment({ operationId: c, amount: '9.00', status: 'MATCHED' });
    // D: FAILED short a minute ago: still replayable, its payment still counts toward it.
    const d = await deposit('100.00', 'FAILED', 'AMOUNT_MISMATCH', ago(60_000));
    const d1 = await payment({ operationId: d, amount: '10.00', status: 'MATCHED' });
    await posting(`inbound:${d1}:receive`, null, [
      [null, 'world:pix', '-10'],
      [null, suspenseBook, '10'],
    ]);
    // E: recorded, never decided (the old code showed it UNMATCHED behind decided = false).
    const e = await deposit('5.00', 'REQUESTED', null, ago(60_000));
    const e1 = await payment({ operationId: e, amount: '5.00', status: 'UNMATCHED', decided: false });
    await posting(`inbound:${e1}:receive`, null, [
      [null, 'world:pix', '-5'],
      [null, suspenseBook, '5'],
    ]);
    // F: an operator's credit: the old code pointed the payment at the DEPOSIT it created instead of the deposit it
    // arrived for.
    const fPayment = randomUUID();
    const fCredit = await deposit('8.00', 'COMPLETED', null, ago(60_000), { inboundPaymentId: fPayment });
    await sql(
      `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
         status, decided, created_at, updated_at)
       values (?, ?, ?, ?, '8.00', 'BRL', 'PIX_KEY', ?, 'CREDITED', true, now(), now())`,
      [fPayment, fCredit, customerId, accountId, `E${fPayment.replace(/-/g, '')}`],
    );
    await posting(`inbound:${fPayment}:receive`, null, [
      [null, 'world:pix', '-8'],
      [null, suspenseBook, '8'],
    ]);
    await posting(`${fCredit}:settle`, fCredit, [
      [null, suspenseBook, '-8'],
      [accountId, 'available', '8'],
    ]);
    // G: a split after the suspense existed: 50 received for 40, the record's amount overwritten with 40.
    const g = await deposit('40.00', 'COMPLETED', null, ago(60_000));
    const g1 = await payment({ operationId: g, amount: '40.00', status: 'MATCHED' });
    const g2 = await payment({
      operationId: g,
      amount: '10.00',
      status: 'UNMATCHED',
      remainderOf: g1,
      endToEndId: `E${g1.replace(/-/g, '')}`,
    });
    await posting(`inbound:${g1}:receive`, null, [
      [null, 'world:pix', '-50'],
      [null, suspenseBook, '50'],
    ]);
    await posting(`${g}:settle`, g, [
      [null, suspenseBook, '-40'],
      [accountId, 'available', '40'],
    ]);

    const applied = await orm.getMigrator().up();
    expect(applied.map((m) => m.name)).to.include('Migration20261126300000InboundPaymentFacts');

    const rows = (await sql(
      `select id, operation_id, status, amount::text, matched_amount::text, remainder_of, credit_operation_id
       from inbound_payments where customer_id = ?`,
      [customerId],
    )) as Array<Record<string, string | null>>;
    const of = (id: string) => rows.find((r) => r.id === id)!;
    const brief = (id: string) => {
      const r = of(id);
      return [r.status, Number(r.amount), r.matched_amount === null ? null : Number(r.matched_amount)];
    };
    expect(brief(a1), 'A: the first payment taken whole').to.deep.equal(['MATCHED', 70, null]);
    expect(brief(a2), 'A: the second, 30 of 50 used').to.deep.equal(['MATCHED', 50, 30]);
    const aRemainders = rows.filter((r) => r.remainder_of === a2);
    expect(aRemainders.map((r) => [r.status, Number(r.amount), r.operation_id])).to.deep.equal([['UNMATCHED', 20, a]]);
    expect(brief(b1), 'B: past its replay window').to.deep.equal(['UNMATCHED', 40, null]);
    expect(brief(c1), 'C: expired').to.deep.equal(['UNMATCHED', 9, null]);
    expect(brief(d1), 'D: replayable').to.deep.equal(['MATCHED', 10, null]);
    expect(brief(e1), 'E: undecided').to.deep.equal(['RECEIVED', 5, null]);
    expect(of(fPayment)).to.deep.include({ status: 'CREDITED', operation_id: null, credit_operation_id: fCredit });
    expect(brief(g1), 'G: the amount received restored').to.deep.equal(['MATCHED', 50, 40]);
    expect(brief(g2)).to.deep.equal(['UNMATCHED', 10, null]);
    expect(
      rows.filter((r) => r.remainder_of === g1),
      'no second remainder',
    ).to.have.length(1);

    // The suspense: A's 20 + B's 40 + C's 9 + D's 10 + E's 5 + G's 10; F's credit took its 8 out.
    const [balance] = await sql(`select available::text as v from balances where account_id = ? and asset = 'BRL'`, [
      suspenseAccountId(customerId),
    ]);
    expect(Number(balance.v)).to.equal(94);
    const legacy = await sql(`select key from ledger_transactions where key like '%:legacy-match'`);
    expect(legacy.map((r) => r.key)).to.deep.equal([`${a}:legacy-match`]);
    const stray = await sql(`select count(*)::int as n from ledger_entries where book like 'suspense:%'`);
    expect(stray[0].n, 'no string-named suspense book is left').to.equal(0);

    const books = await checkBooks(orm.em.fork(), 'BRL');
    expect(books.assets[0].differences, JSON.stringify(books.assets[0])).to.deep.equal([]);
    expect(books.ok).to.equal(true);
    expect(books.assets[0].records).to.deep.include({
      received: '242.00',
      undecided: '5.00',
      matched: '140.00',
      matchedPending: '10.00',
      unmatched: '79.00',
      credited: '8.00',
    });
  });
});
