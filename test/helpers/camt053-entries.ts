// The entries the camt.053 writer's unit test renders (test/unit/camt053-writer.test.ts; the bytes it expects are
// test/fixtures/statements/camt053-writer.xml): each path through the writer, the plain text nearly every entry
// carries and the text that needs cleaning, escaping or cutting.
import type { StatementDocument } from '../../statements/formats/document';
import type { StatementEntry, StatementSource } from '../../statements/statement';

const brl = (value: string) => ({ value, asset: 'BRL' as const, decimals: 2 });
const uuid = (n: number) => `0f1e2d3c-4b5a-4978-8${String(n).padStart(3, '0')}-a1b2c3d4e5f6`;

let n = 0;
const entry = (e: Partial<StatementEntry>): StatementEntry => ({
  id: uuid(++n),
  bookedAt: `2026-11-03T10:00:${String(n).padStart(2, '0')}.123456Z`,
  operationId: null,
  operationType: null,
  direction: 'CREDIT',
  amount: brl('2.00'),
  balanceAfter: brl('100.00'),
  description: 'bench posting',
  ...e,
});

export const WRITER_ENTRIES: StatementEntry[] = [
  entry({}),
  entry({ direction: 'DEBIT', amount: brl('1.00') }),
  entry({
    operationId: uuid(900),
    operationType: 'DEPOSIT',
    description: 'DEPOSIT settlement',
    endToEnd: 'E1234567820261103100000abcdefghij',
  }),
  entry({
    operationId: uuid(901),
    operationType: 'DEPOSIT',
    direction: 'DEBIT',
    description: 'inbound payment returned: fraud & <abuse>',
  }),
  entry({
    operationId: uuid(902),
    operationType: 'WITHDRAWAL',
    direction: 'DEBIT',
    description: 'WITHDRAWAL settlement',
  }),
  entry({ operationId: uuid(903), operationType: 'WITHDRAWAL', description: '  returned by the bank  ' }),
  entry({ operationId: uuid(904), operationType: 'SWAP', description: 'SWAP settlement', endToEnd: 'x'.repeat(36) }),
  entry({
    operationId: uuid(905),
    operationType: 'TRANSFER',
    direction: 'DEBIT',
    description: 'a\u0001b\u0085c\tend\r\n',
  }),
  entry({ description: '' }),
  entry({ description: '   ' }),
  entry({ description: 'Pagamento São Paulo — ok' }),
  entry({ description: `${'x'.repeat(498)}😀😀yz` }),
  entry({ description: 'y'.repeat(501) }),
  entry({ description: 'z'.repeat(500) }),
  entry({ description: '&' }),
  entry({ description: 'q' }),
  entry({ description: 'lone \uD800 surrogate' }),
  entry({ id: 'not-a-canonical-uuid', operationId: 'ABCDEF01-2345-6789-ABCD-EF0123456789', operationType: 'A&B' }),
  entry({ operationType: 'AN_OPERATION_TYPE_LONGER_THAN_THIRTY_FIVE' }),
  entry({ direction: 'DEBIT', operationType: 'SWAP', amount: brl('0.01'), description: 'tail>' }),
];

export function writerSource(pages: StatementEntry[][]): StatementSource {
  return {
    header: {
      id: '9a8b7c6d-5e4f-8321-9abc-def012345678',
      accountId: '12345678-9abc-4def-8123-456789abcdef',
      asset: 'BRL',
      periodStart: '2026-11-03T00:00:00Z',
      periodEnd: '2026-11-04T00:00:00Z',
      openingBalance: brl('98.00'),
      closingBalance: brl('123.45'),
    },
    pages: (async function* () {
      for (const page of pages) yield page;
    })(),
  };
}

export const WRITER_DOCUMENT: StatementDocument = {
  holderName: 'Comércio & Filhos <Ltda>',
  sequence: 7,
  renderedAt: new Date('2026-12-01T00:00:00Z'),
  messageId: '0123456789abcdef0123456789abcdef',
};
