// BOLETO: no provider yet. A deposit shows a (sandbox) barcode; an operator records what the bank statement shows
// (`cambio payment record --rail BOLETO`). A connector for a boleto provider replaces this folder's entry.
import type { RailEntry } from '../rail';
import { sandboxDigits } from '../sandbox-digits';

const RAIL = 'BOLETO';

export const boletoRail: RailEntry = {
  rail: RAIL,
  slug: 'boleto',
  assets: ['BRL'],
  transactionType: RAIL,
  recordedBy: 'operator',
  instruction: {
    summary: 'BOLETO `barcode` and `dueDate`',
    properties: { barcode: { type: 'string' }, dueDate: { type: 'string', format: 'date' } },
  },
  fundingInstruction: (operationId, _asset, dueDate) => ({
    rail: RAIL,
    barcode: `23793${sandboxDigits(`${operationId}:boleto`, 42)}`,
    dueDate: dueDate.toISOString().slice(0, 10),
  }),
  hasProvider: () => false,
};
