// A statement's period is the instants it was asked for, to the microsecond the API accepts (decision 0173): its
// header names those bounds and its id is made of them, so two statements with different entries never share an id
// or a printed period.
import { expect } from 'chai';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';
import { newCustomer } from '../helpers/stack';
import { getStatement, type StatementBody } from '../helpers/statements';

const micros = (iso: string) => {
  const m = /\.(\d+)Z$/.exec(iso);
  const fraction = (m?.[1] ?? '').padEnd(6, '0');
  return BigInt(Date.parse(iso.replace(/\.\d+Z$/, 'Z'))) * 1000n + BigInt(fraction);
};
const iso = (us: bigint) =>
  new Date(Number(us / 1000n)).toISOString().replace('Z', `${(us % 1000n).toString().padStart(3, '0')}Z`);

describe('Statement periods to the microsecond', function () {
  this.timeout(120000);

  it('a bound between two milliseconds is printed and identified as sent, not rounded to the millisecond', async () => {
    const c = await newCustomer('Micro Periods Ltda');
    const a = (await activeAccount(c, ['BRL'])).id;
    const periodStart = new Date(Date.now() - 60_000).toISOString();
    let booked = 0n;
    // An entry whose next microsecond is in the same millisecond (999 in 1,000 are).
    while (booked === 0n || booked % 1000n === 999n) {
      await fund(c, a, 'BRL', '10.00');
      const all = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd: new Date().toISOString() });
      const entries = (all.body as StatementBody).entries;
      booked = micros(entries[entries.length - 1].bookedAt);
    }
    const read = async (periodEnd: string) => {
      const res = await getStatement(c, a, { asset: 'BRL', periodStart, periodEnd });
      expect(res.status, res.text).to.equal(200);
      return { body: res.body as StatementBody, id: res.headers['x-statement-id'] };
    };
    const without = await read(iso(booked));
    const withIt = await read(iso(booked + 1n));
    expect(withIt.body.entries.length).to.equal(without.body.entries.length + 1);
    // Different entries, different closing balances: different statements.
    expect(withIt.body.id).to.not.equal(without.body.id);
    expect(withIt.id).to.equal(withIt.body.id);
    for (const [s, end] of [
      [without.body, booked],
      [withIt.body, booked + 1n],
    ] as const) {
      expect(micros(s.periodEnd), s.periodEnd).to.equal(end);
      for (const e of s.entries) expect(micros(e.bookedAt) < micros(s.periodEnd), e.bookedAt).to.equal(true);
    }
    // A bound on a whole millisecond is written as before (an issued statement's id does not change).
    expect(withIt.body.periodStart).to.equal(periodStart);
  });
});
