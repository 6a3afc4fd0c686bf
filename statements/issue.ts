// Issuing statements (decision 0073): for the period that closed last before the scheduled instant, one statement per
// account and enabled asset (and first those of the periods a paused schedule missed since the account-asset's last
// statement: decision 0314), stored with the SHA-256 of its JSON form and announced by STATEMENT_ISSUED. A closed
// period never changes, so a statement issued again is the same bytes; one already stored is skipped, which makes the
// whole pass idempotent (a retried activity, a triggered run). A statement is never whole in memory: its JSON form is
// hashed and stored a piece at a time as its entries stream. A period is issued only once no transaction that can still
// book into it is open (decision 0112): a posting stamps its instant when it moves the balance, not when it commits, so
// one that booked just before the period's end may commit after it.
import { createHash, randomUUID } from 'node:crypto';
import type { Config } from '../config';
import { systemEm, tenantEm, type Em, type Orm } from '../db/orm';
import {
  accountsToIssue,
  type AccountToIssue,
  dropStatementBody,
  isIssued,
  lastIssuedPeriodEnds,
  purgeOrphanStatementBodies,
  storeIssuedStatement,
  storeStatementPiece,
} from '../db/repositories/issued-statements';
import { untilBookedBefore } from '../services/booked-before';
import { isoMicros } from '../domain/report-period';
import { catchesUp, closedPeriodBefore, missedPeriods, parseStatementInterval } from '../domain/statement-interval';
import { openStatement, statementId, type StatementSource } from './statement';
import { statementJson } from './formats/json';
import { statementIssuedPayload } from '../webhooks/statement-event';

const ACCOUNTS_PAGE = 200;
// Accounts issued at once: each is a few short reads and one short transaction on the worker's pool.
const CONCURRENCY = 4;
// A stored piece of a body: big enough that a million entries are a few hundred rows, small enough to hold.
const PIECE_CHARS = 1 << 20;
// A body no statement row names, older than this, was left by an issuing that died mid-write.
const ORPHAN_AGE_MS = 24 * 3600_000;
export interface IssueDeps {
  orm: Orm;
  config: Pick<Config, 'statementInterval' | 'webhookTaskQueue'>;
}

export interface IssueResult {
  periodStart: string;
  periodEnd: string;
  issued: number;
  skipped: number;
  /** Statements of earlier periods a paused or unreachable schedule missed, issued first by this run (0314). */
  caughtUp: number;
  /** How long the run waited for the database's clock and the transactions that could still book into the period. */
  waitedMs: number;
}

/** Called while the run works or waits (the activity heartbeats with it; `detail` says what it waits for). */
export type Progress = (detail?: Record<string, string>) => void;

/**
 * Returns once every posting booked before `end` has committed or rolled back, so that the period's statements read
 * now are the ones read at any later time (services/booked-before.ts; the schedule fires on Temporal's clock, and
 * booked_at is the database's). How long it waited.
 */
export async function untilPeriodSettled(em: Em, end: Date, progress?: Progress): Promise<number> {
  const started = Date.now();
  await untilBookedBefore(em, isoMicros(BigInt(end.getTime()) * 1000n), { progress });
  return Date.now() - started;
}

/**
 * Writes the statement's JSON form under a new body id, a piece at a time (each a run of the writer's chunks, so it
 * ends on an entry boundary), and returns the body id and the SHA-256 of the whole text. Reports progress after each
 * piece: a statement of a busy account takes minutes to write, longer than the activity's heartbeat timeout, and an
 * attempt that stays silent that long is timed out and started again while it goes on (decision 0213).
 */
async function writeBody(
  deps: IssueDeps,
  source: StatementSource,
  progress?: Progress,
): Promise<{ bodyId: string; sha256: string }> {
  const sys = systemEm(deps.orm);
  const bodyId = randomUUID();
  const hash = createHash('sha256');
  let n = 0;
  let piece = '';
  for await (const chunk of statementJson(source)) {
    hash.update(chunk);
    piece += chunk;
    if (piece.length >= PIECE_CHARS) {
      await storeStatementPiece(sys, bodyId, n++, piece);
      piece = '';
      progress?.();
    }
  }
  if (piece !== '' || n === 0) await storeStatementPiece(sys, bodyId, n, piece);
  return { bodyId, sha256: hash.digest('hex') };
}

export async function issueStatements(deps: IssueDeps, at: Date, progress?: Progress): Promise<IssueResult> {
  const interval = parseStatementInterval(deps.config.statementInterval);
  const period = closedPeriodBefore(interval, at);
  const sys = systemEm(deps.orm);
  const waitedMs = await untilPeriodSettled(sys, period.end, progress);
  const result: IssueResult = {
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    issued: 0,
    skipped: 0,
    caughtUp: 0,
    waitedMs,
  };
  await purgeOrphanStatementBodies(sys, new Date(Date.now() - ORPHAN_AGE_MS));
  let after: string | null = null;
  for (;;) {
    const accounts = await accountsToIssue(sys, period.end, after, ACCOUNTS_PAGE);
    // Read only where a run makes up missed periods: an ISO duration's runs never do.
    const ids = accounts.map((a) => a.id);
    const lastEnds = catchesUp(interval) ? await lastIssuedPeriodEnds(sys, ids) : new Map<string, Date>();
    const jobs = accounts.flatMap((a) => a.assets.map((asset) => ({ account: a, asset })));
    for (let i = 0; i < jobs.length; i += CONCURRENCY) {
      await Promise.all(
        jobs.slice(i, i + CONCURRENCY).map(async ({ account, asset }) => {
          // The periods a paused or unreachable schedule missed first, oldest first, so that an account-asset's
          // issued periods still follow one another and their sequence numbers never change (decision 0314).
          for (const missed of missedPeriods(interval, lastEnds.get(`${account.id}:${asset}`), period)) {
            if ((await issueOne(deps, account, asset, missed, progress)) === 'issued') result.caughtUp++;
          }
          result[await issueOne(deps, account, asset, period, progress)]++;
        }),
      );
      progress?.();
    }
    if (accounts.length < ACCOUNTS_PAGE) return result;
    after = accounts[accounts.length - 1].id;
  }
}

/** Issues one account-asset's statement of `period`: 'skipped' when it was issued already (now or meanwhile). */
async function issueOne(
  deps: IssueDeps,
  account: AccountToIssue,
  asset: string,
  period: { start: Date; end: Date },
  progress?: Progress,
): Promise<'issued' | 'skipped'> {
  const sys = systemEm(deps.orm);
  const periodStart = period.start.toISOString();
  const periodEnd = period.end.toISOString();
  const id = statementId(account.id, asset, periodStart, periodEnd);
  if (await isIssued(sys, id)) return 'skipped';
  const em = tenantEm(deps.orm, account.customerId);
  const source = await openStatement(em, { accountId: account.id, asset, periodStart, periodEnd });
  const { bodyId, sha256: hash } = await writeBody(deps, source, progress);
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
      bodyId,
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
  if (stored) return 'issued';
  // Another issuing stored the same statement meanwhile: this body is nobody's.
  await dropStatementBody(sys, bodyId);
  return 'skipped';
}
