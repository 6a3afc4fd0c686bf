// The pure half of the TED poll (rails/ted/transactions.ts): the booking days a window asks for, page following, and
// which listed entries are TEDs received, with their payer.
import { expect } from 'chai';
import {
  bookingDates,
  creditProblem,
  followPages,
  isTedCredit,
  receivedTed,
  type AccountTransaction,
} from '../../rails/ted/transactions';

const credit = (over: Partial<AccountTransaction> = {}): AccountTransaction => ({
  transactionId: 'T1',
  type: 'TED',
  creditDebitType: 'CREDITO',
  transactionAmount: { amount: '100.0000', currency: 'BRL' },
  transactionDateTime: '2026-12-02T12:00:00.000Z',
  partieCnpjCpf: '11.222.333/0001-81',
  partiePersonType: 'PESSOA_JURIDICA',
  partieCompeCode: '001',
  partieBranchCode: '1234',
  partieNumber: '987654',
  partieCheckDigit: '3',
  ...over,
});

describe('TED poll: booking days', () => {
  it('covers yesterday and today (Brasília) for a window of a minute', () => {
    const to = new Date('2026-12-02T12:00:00Z');
    const window = { from: new Date(to.getTime() - 60_000), to };
    expect(bookingDates(window)).to.deep.equal({ fromBookingDate: '2026-12-01', toBookingDate: '2026-12-02' });
  });

  it('takes the days in Brasília time: 01:00 UTC is still the day before there', () => {
    const to = new Date('2026-12-02T01:00:00Z');
    expect(bookingDates({ from: new Date('2026-12-02T00:50:00Z'), to })).to.deep.equal({
      fromBookingDate: '2026-11-30',
      toBookingDate: '2026-12-01',
    });
  });

  it('reaches back to the window start when it is older than yesterday (a poll that was down)', () => {
    const window = { from: new Date('2026-11-25T15:00:00Z'), to: new Date('2026-12-02T15:00:00Z') };
    expect(bookingDates(window)).to.deep.equal({ fromBookingDate: '2026-11-25', toBookingDate: '2026-12-02' });
  });
});

describe('TED poll: page following', () => {
  const pages = (n: number, by: 'next' | 'meta') => {
    const asked: number[] = [];
    const fetch = async (page: number) => {
      asked.push(page);
      const data = [credit({ transactionId: `T${page}` })];
      return by === 'next'
        ? { data, links: page < n ? { next: `?page=${page + 1}` } : {} }
        : { data, links: {}, meta: { totalPages: n } };
    };
    return { asked, fetch };
  };

  it('follows links.next from page 1 to the last', async () => {
    const { asked, fetch } = pages(3, 'next');
    const all = await followPages(fetch);
    expect(asked).to.deep.equal([1, 2, 3]);
    expect(all.map((t) => t.transactionId)).to.deep.equal(['T1', 'T2', 'T3']);
  });

  it('follows meta.totalPages when the bank gives no next link', async () => {
    const { asked, fetch } = pages(2, 'meta');
    await followPages(fetch);
    expect(asked).to.deep.equal([1, 2]);
  });

  it('stops at an empty page even if the bank says there are more', async () => {
    const asked: number[] = [];
    await followPages(async (page) => (asked.push(page), { data: [], links: { next: 'x' }, meta: { totalPages: 9 } }));
    expect(asked).to.deep.equal([1]);
  });
});

describe('TED poll: what counts as a TED received', () => {
  it('takes the credits a payer sends from an account (TED, same-bank transfer, DOC), not a Pix (0302)', () => {
    expect(isTedCredit(credit())).to.equal(true);
    expect(isTedCredit(credit({ creditDebitType: 'DEBITO' }))).to.equal(false);
    for (const type of ['TRANSFERENCIA_MESMA_INSTITUICAO', 'DOC']) expect(isTedCredit(credit({ type }))).to.equal(true);
    for (const type of ['PIX', 'RESGATE_APLIC_FINANCEIRA', 'OPERACAO_CREDITO', 'OUTROS', undefined])
      expect(isTedCredit(credit({ type }))).to.equal(false);
    // An entry that is no object tells nothing: passed on, and refused as unreadable, never skipped.
    expect(isTedCredit(null)).to.equal(true);
    expect(receivedTed(null)).to.deep.include({ unreadable: 'the entry is not an object', unnamed: true });
  });

  it('holds a credit the bank has not effected yet (decision 0301)', () => {
    expect(creditProblem(credit({ completedAuthorisedPaymentType: 'TRANSACAO_EFETIVADA' }))).to.equal(null);
    expect(creditProblem(credit({ completedAuthorisedPaymentType: 'TRANSACAO_PROCESSANDO' }))).to.match(/effected/);
    expect(creditProblem(credit({ completedAuthorisedPaymentType: 'LANCAMENTO_FUTURO' }))).to.match(/effected/);
  });

  it('reads a payer written as a number by its digits, and refuses one that is neither', () => {
    expect(receivedTed(credit({ partieCnpjCpf: 1222333000181 as never })).payerAccount?.taxId).to.equal(
      '01222333000181',
    );
    expect(creditProblem(credit({ partieCnpjCpf: { digits: '1' } as never }))).to.match(/partieCnpjCpf/);
    expect(creditProblem(credit({ transactionId: 42 as never }))).to.match(/transactionId/);
  });

  it('translates one into a payment of whole cents keyed by transactionId, with its payer', () => {
    expect(creditProblem(credit())).to.equal(null);
    expect(receivedTed(credit())).to.deep.include({
      endToEndId: 'T1',
      amount: '100.00',
      asset: 'BRL',
      payerAccount: {
        taxId: '11222333000181',
        personType: 'COMPANY',
        bankCode: '001',
        branchCode: '1234',
        accountNumber: '987654',
        accountDigit: '3',
      },
    });
    expect(
      receivedTed(credit({ partieCnpjCpf: '12345678909', partiePersonType: 'PESSOA_NATURAL' })).payerAccount,
    ).to.have.property('personType', 'INDIVIDUAL');
  });

  it('marks what cannot be recorded as it stands: fractions of a cent, no id, another currency', () => {
    expect(creditProblem(credit({ transactionAmount: { amount: '100.0050', currency: 'BRL' } }))).to.match(/cents/);
    expect(creditProblem(credit({ transactionId: undefined }))).to.match(/transactionId/);
    expect(creditProblem(credit({ transactionAmount: { amount: '1.00', currency: 'USD' } }))).to.match(/currency/);
    expect(receivedTed(credit({ transactionAmount: { amount: '100.0050', currency: 'BRL' } }))).to.deep.include({
      amount: '100.0050',
      unreadable: 'amount 100.0050 is not whole cents',
    });
  });

  it('reads a TED with no payer as one, and a payer as Cambio compares tax ids (decision 0188)', () => {
    expect(creditProblem(credit({ partieCnpjCpf: undefined }))).to.equal(null);
    expect(receivedTed(credit({ partieCnpjCpf: undefined }))).not.to.have.property('payerAccount');
    const taxIdOf = (partieCnpjCpf: string, partiePersonType?: string) =>
      receivedTed(credit({ partieCnpjCpf, partiePersonType })).payerAccount?.taxId;
    expect(taxIdOf('12.abc.345/01de-35')).to.equal('12ABC34501DE35');
    expect(taxIdOf('1222333000181', 'PESSOA_JURIDICA')).to.equal('01222333000181');
    expect(taxIdOf('1222333000181')).to.equal('01222333000181');
    expect(taxIdOf('2345678909', 'PESSOA_NATURAL')).to.equal('02345678909');
    expect(taxIdOf('12345678909', 'PESSOA_NATURAL')).to.equal('12345678909');
  });
});
