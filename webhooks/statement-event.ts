import type { StatementHeader } from '../statements/statement';

/**
 * STATEMENT_ISSUED: a closed period's statement was issued. The balances and the hash travel with it; the entries
 * are read with `GET /api/statements/{statementId}` (any format).
 */
export function statementIssuedPayload(s: StatementHeader & { customerId: string; sha256: string }) {
  return {
    customerId: s.customerId,
    statementId: s.id,
    accountId: s.accountId,
    asset: s.asset,
    periodStart: s.periodStart,
    periodEnd: s.periodEnd,
    openingBalance: s.openingBalance,
    closingBalance: s.closingBalance,
    sha256: s.sha256,
  };
}
