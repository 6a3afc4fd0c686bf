// Issuing statements (docs/decisions.md, "Statements and balances at any instant"): for the period that closed last
// before the scheduled instant, one statement per account and enabled asset, stored with the SHA-256 of its JSON form
// and announced by STATEMENT_ISSUED. A closed period never changes, so a statement issued again is the same bytes;
// one already stored is skipped, which makes the whole pass idempotent (a retried activity, a triggered run).
import { createHash } from 'node:crypto';
import type { Config } from '../config';
import { systemEm, tenantEm, type Orm } from '../db/orm';
import { accountsToIssue, isIssued, storeIssuedStatement } from '../db/repositories/issued-statements';
import { closedPeriodBefore, parseStatementInterval } from '../domain/statement-interval';
import { openStatement, statementId } from './statement';
import { statementJson } from './formats/json';
import { statementIssuedPayload } from '../webhooks/statement-event';

const ACCOUNTS_PAGE = 200;
// Accounts issued at once: each is a few short reads and one short transaction on the worker's pool.
const CONCURRENCY = 4;

export interface IssueDeps {
  orm: Orm;
  config: Pick<Config, 'statementInterval' | 'webhookTaskQueue'>;
}

export interface IssueResult {
  periodStart: string;
  periodEnd: string;
  issued: number;
  skipped: number;
}

/** The statement's JSON form, whole: what is hashed and stored. */
export async function statementJsonText(source: Parameters<typeof statementJson>[0]): Promise<string> {
  let text = '';
  for await (const chunk of statementJson(source)) text += chunk;
  return text;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export async function issueStatements(deps: IssueDeps, at: Date, progress?: () => void): Promise<IssueResult> {
  const period = closedPeriodBefore(parseStatementInterval(deps.config.statementInterval), at);
  const periodStart = period.start.toISOString();
  const periodEnd = period.end.toISOString();
  const result: IssueResult = { periodStart, periodEnd, issued: 0, skipped: 0 };
  const sys = systemEm(deps.orm);
  let after: string | null = null;
  for (;;) {
    const accounts = await accountsToIssue(sys, period.end, after, ACCOUNTS_PAGE);
    const jobs = accounts.flatMap((a) => a.assets.map((asset) => ({ account: a, asset })));
    for (let i = 0; i < jobs.length; i += CONCURRENCY) {
      await Promise.all(
        jobs.slice(i, i + CONCURRENCY).map(async ({ account, asset }) => {
          const id = statementId(account.id, asset, periodStart, periodEnd);
          if (await isIssued(sys, id)) return void result.skipped++;
          const em = tenantEm(deps.orm, account.customerId);
          const source = await openStatement(em, { accountId: account.id, asset, periodStart, periodEnd });
          const body = await statementJsonText(source);
          const hash = sha256(body);
          const stored = await storeIssuedStatement(
            sys,
            deps.config,
            {
              id,
              customerId: account.customerId,
              accountId: account.id,
              asset,
              periodStart: period.start,
              periodEnd: period.end,
              sha256: hash,
              body,
            },
            {
              customerId: account.customerId,
              type: 'STATEMENT_ISSUED',
              resourceType: 'STATEMENT',
              resourceId: id,
              dedupeKey: `${id}:STATEMENT_ISSUED`,
              payload: statementIssuedPayload({ ...source.header, customerId: account.customerId, sha256: hash }),
              atTime: new Date(),
            },
          );
          if (stored) result.issued++;
          else result.skipped++;
        }),
      );
      progress?.();
    }
    if (accounts.length < ACCOUNTS_PAGE) return result;
    after = accounts[accounts.length - 1].id;
  }
}
