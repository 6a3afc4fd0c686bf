import type { IssuedStatement } from '../db/entities/statement';
import type { Page } from '../lists/run-list';

export function presentIssuedStatement(s: IssuedStatement) {
  return {
    id: s.id,
    accountId: s.accountId,
    asset: s.asset,
    periodStart: s.periodStart.toISOString(),
    periodEnd: s.periodEnd.toISOString(),
    sha256: s.sha256,
    createdAt: s.createdAt.toISOString(),
  };
}

/** A page of issued statements as the list shows it. */
export const presentIssuedStatements = (page: Page<IssuedStatement>) => ({
  data: page.data.map(presentIssuedStatement),
  meta: page.meta,
});
