// TED: no provider yet. A deposit shows (sandbox) bank account details; an operator records what the bank
// statement shows (`cambio payment record --rail TED`). A connector for a TED provider replaces this folder's entry.
import type { RailEntry } from '../rail';
import { sandboxDigits } from '../sandbox-digits';

const RAIL = 'TED';

export const tedRail: RailEntry = {
  rail: RAIL,
  slug: 'ted',
  assets: ['BRL'],
  transactionType: RAIL,
  recordedBy: 'operator',
  instruction: {
    summary: 'TED bank, branch and account',
    properties: { bankCode: { type: 'string' }, branchCode: { type: 'string' }, accountNumber: { type: 'string' } },
  },
  fundingInstruction: (operationId) => ({
    rail: RAIL,
    bankCode: '341',
    branchCode: '0001',
    accountNumber: `${sandboxDigits(`${operationId}:ted`, 8)}-${sandboxDigits(`${operationId}:dv`, 1)}`,
  }),
  hasProvider: () => false,
};
