// What a statement's documents (statements/formats/) print beyond the statement itself: the account holder's name
// (PDF, camt.053's account owner: the account's registered owner, as an operation's account reference names it) and
// the statement's electronic sequence number among the account-asset's issued statements (camt.053 ElctrncSeqNb).
// How it reaches Postgres: hand-written statements through em.execute, one index lookup each. Tenant: both name the
// scope's customer (`tenantOf`), so another customer's account or statement reads as absent.
import { Em, tenantOf } from '../orm';

/** The registered owner's name of the scope's customer's account; null when it holds no such account. */
export async function accountHolderName(em: Em, accountId: string): Promise<string | null> {
  const rows = (await em.execute('select a.legal_name as name from accounts a where a.id = ? and a.customer_id = ?', [
    accountId,
    tenantOf(em),
  ])) as Array<{ name: string }>;
  return rows[0]?.name ?? null;
}

/**
 * The issued statement's place (1, 2, ...) among the issued statements of its account and asset, in the order their
 * periods end (then start); null when no statement of the scope's customer has this id (a statement on demand over
 * another period). By the end, not the start: after STATEMENT_INTERVAL grows (day to month) the first longer period
 * starts before the last shorter ones end, and a rank by start moved it among them and renumbered those already
 * issued (decision 0113, amended). Issued periods end one after another, so a new one always ranks last.
 */
export async function issuedStatementSequence(em: Em, statementId: string): Promise<number | null> {
  const rows = (await em.execute(
    `select (select count(*) from statements p
             where p.account_id = s.account_id and p.asset = s.asset
               and (p.period_end, p.period_start) <= (s.period_end, s.period_start))::int as n
     from statements s where s.id = ? and s.customer_id = ?`,
    [statementId, tenantOf(em)],
  )) as Array<{ n: number }>;
  return rows[0]?.n ?? null;
}
