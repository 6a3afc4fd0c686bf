// The boleto checks that are ours (rails/boleto/codes.ts): the due-date factor with its 2025-02-22 restart, and the
// amount and factor of the codes against the deposit; the check digits are the library's, checked through it.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { boletoCodes } from '../../psp-simulator/bank-boleto/codes';
import {
  barcodeCheckDigit,
  barcodeOf,
  barcodeOfLine,
  boletoCodeProblems,
  dueDateFactor,
} from '../../rails/boleto/codes';
import { boletoRail } from '../../rails/boleto';
import { boletoDueDate, easter } from '../../rails/boleto/due-date';

describe('boleto codes', () => {
  it('counts the due-date factor from 1997-10-07 and restarts it at 1000 on 2025-02-22', () => {
    expect(dueDateFactor('2000-07-03')).to.equal('1000');
    expect(dueDateFactor('2018-07-15')).to.equal('7586');
    expect(dueDateFactor('2025-02-21')).to.equal('9999');
    expect(dueDateFactor('2025-02-22')).to.equal('1000');
    expect(dueDateFactor('2026-12-03')).to.equal('1649');
  });

  it('accepts a published boleto and the codes a bank writes for the deposit', () => {
    const line = '00190000090114971860168524522114675860000102656';
    expect(
      boletoCodeProblems(
        { barcode: barcodeOfLine(line), digitableLine: line },
        { amount: '1026.56', dueDate: '2018-07-15' },
      ),
    ).to.deep.equal([]);
    const codes = boletoCodes('99.90', '2026-12-03', '0001112123456789010000001');
    const want = { amount: '99.90', dueDate: '2026-12-03' };
    expect(boletoCodeProblems({ barcode: codes.barcode, digitableLine: codes.digitableLine }, want)).to.deep.equal([]);
  });

  it('refuses an amount a cent off, a due date a day off, a wrong check digit and a barcode of another line', () => {
    const codes = boletoCodes('99.90', '2026-12-03', '0001112123456789010000001');
    const check = (want: { amount: string; dueDate: string }, c = codes) =>
      boletoCodeProblems({ barcode: c.barcode, digitableLine: c.digitableLine }, want);
    expect(check({ amount: '99.89', dueDate: '2026-12-03' })).to.have.length(1);
    expect(check({ amount: '99.90', dueDate: '2026-12-04' })).to.have.length(1);
    const digit = (codes.digitableLine[9] === '0' ? '1' : '0') as string;
    const badLine = codes.digitableLine.slice(0, 9) + digit + codes.digitableLine.slice(10);
    expect(check({ amount: '99.90', dueDate: '2026-12-03' }, { ...codes, digitableLine: badLine })[0]).to.include(
      'check digit',
    );
    const other = boletoCodes('99.90', '2026-12-03', '0001112999999999910000001');
    expect(check({ amount: '99.90', dueDate: '2026-12-03' }, { ...codes, barcode: other.barcode })).to.not.deep.equal(
      [],
    );
    expect(check({ amount: '99.90', dueDate: '2026-12-03' }, { ...codes, barcode: '123' })).to.deep.equal([
      'the barcode is not 44 digits',
    ]);
  });

  it('writes a barcode with its mod-11 check digit, factor and amount: the published one, and the stand-in', () => {
    const published = barcodeOfLine('00190000090114971860168524522114675860000102656');
    expect(barcodeOf('001', '2018-07-15', '1026.56', published.slice(19))).to.equal(published);
    expect(() => barcodeOf('001', '2018-07-15', '100000000.00', published.slice(19))).to.throw(/not an amount/);
    // Without a bank (sandbox), a BOLETO deposit's stand-in is 44 digits like a bank's, for the deposit's amount.
    const windowEnd = new Date(Date.now() + 86_400_000);
    const standIn = boletoRail.fundingInstruction(randomUUID(), 'BRL', windowEnd, { amount: '1234.56' } as never);
    expect(standIn.barcode).to.match(/^\d{44}$/);
    expect(standIn.barcode[4]).to.equal(barcodeCheckDigit(standIn.barcode.slice(0, 4) + standIn.barcode.slice(5)));
    expect(standIn.barcode.slice(5, 19)).to.equal(dueDateFactor(standIn.dueDate) + '0000123456');
  });

  it('falls due at the window’s end, at least the next business day (weekends and national holidays skipped)', () => {
    // Friday 2026-12-04 10:00 in Brasília, a 30-minute window: due Monday 2026-12-07.
    expect(boletoDueDate(new Date('2026-12-04T13:00:00Z'), new Date('2026-12-04T13:30:00Z'))).to.equal('2026-12-07');
    // Thursday 2026-12-24: Christmas is a holiday, so Saturday and Sunday too: due Monday 2026-12-28.
    expect(boletoDueDate(new Date('2026-12-24T13:00:00Z'), new Date('2026-12-24T14:00:00Z'))).to.equal('2026-12-28');
    // A window ending later than that: its end (a business day).
    expect(boletoDueDate(new Date('2026-12-01T13:00:00Z'), new Date('2026-12-10T13:00:00Z'))).to.equal('2026-12-10');
  });

  it('finds Easter as the published tables give it, across centuries', () => {
    const published = {
      1900: '1900-04-15',
      1961: '1961-04-02',
      2000: '2000-04-23',
      2019: '2019-04-21',
      2024: '2024-03-31',
      2026: '2026-04-05',
      2027: '2027-03-28',
      2038: '2038-04-25',
      2106: '2106-04-18',
      2114: '2114-04-22',
      2285: '2285-03-22',
    };
    for (const [year, day] of Object.entries(published)) expect(easter(Number(year)), year).to.equal(day);
  });

  it('skips both days of Carnival, the Monday as well as the Tuesday, and Good Friday', () => {
    // Friday 2026-02-13: Monday 16 and Tuesday 17 are Carnival (Easter 2026-04-05): due Wednesday 18.
    expect(boletoDueDate(new Date('2026-02-13T13:00:00Z'), new Date('2026-02-13T13:30:00Z'))).to.equal('2026-02-18');
    // A window ending on Carnival Monday 2027-02-08 (Easter 2027-03-28): due Wednesday 2027-02-10.
    expect(boletoDueDate(new Date('2027-02-01T13:00:00Z'), new Date('2027-02-08T13:00:00Z'))).to.equal('2027-02-10');
    // Good Friday 2026-04-03, from the Thursday: due Monday 2026-04-06.
    expect(boletoDueDate(new Date('2026-04-02T13:00:00Z'), new Date('2026-04-02T14:00:00Z'))).to.equal('2026-04-06');
  });
});
