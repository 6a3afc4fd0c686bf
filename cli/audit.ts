import os from 'node:os';
import type { Command } from 'commander';
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import { loadConfig } from '../config';
import type { Orm } from '../db/orm';
import { openCliOrm } from './orm';
import { appendAudit, appendAuditWith, AuditKey } from '../db/repositories/audit-log';
import { CambioError } from '../domain/errors';
import { auditKey } from './audit-key';
import { crashPoint } from '../services/crash-point';

// Operator actions are audited (decisions 0049, 0069): the commands that act, and the action each one records.
// Reads (lists, reports, the audit log itself) record nothing.
const AUDITED: Record<string, string> = {
  'customer create': 'customer.create',
  'customer disable': 'customer.disable',
  'customer enable': 'customer.enable',
  'customer rotate-secret': 'customer.rotate-secret',
  'account approve': 'account.approve',
  'account reject': 'account.reject',
  'account tag': 'account.tag',
  // Reading a company's or a person's identity document is recorded too (decision 0351).
  'account document': 'account.document',
  'instruction approve': 'instruction.approve',
  'instruction reject': 'instruction.reject',
  'withdrawal approve': 'withdrawal.approve',
  'withdrawal reject': 'withdrawal.reject',
  'deposit replay': 'deposit.replay',
  'deposit pay': 'deposit.pay',
  'payment return': 'payment.return',
  'payment credit': 'payment.credit',
  'payment record': 'payment.record',
  'webhook redeliver': 'webhook.redeliver',
  'schedule pause': 'schedule.pause',
  'schedule unpause': 'schedule.unpause',
  'schedule trigger': 'schedule.trigger',
};

interface Pending {
  action: string;
  target: string;
  reason: string | null;
  details: Record<string, unknown>;
  key: AuditKey;
  /** The transaction whose COMMIT carries the row (set before it commits, kept once it did). */
  carrier?: unknown;
  committed: boolean;
  /** Its row was written before the action, as REQUESTED (auditRequest): success adds nothing, a failure its code. */
  requested?: boolean;
}

let pending: Pending | undefined;
let operator = '';

/**
 * Takes `--operator NAME` (or `--operator=NAME`) out of the arguments, wherever it stands, so every command accepts
 * it without declaring it; falls back to CAMBIO_OPERATOR, then the OS user.
 */
export function takeOperator(argv: string[]): string[] {
  const rest: string[] = [];
  let named: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--operator') named = operatorName(argv[++i]);
    else if (argv[i].startsWith('--operator=')) named = operatorName(argv[i].slice('--operator='.length));
    else rest.push(argv[i]);
  }
  operator = named || process.env.CAMBIO_OPERATOR || os.userInfo().username;
  return rest;
}

/**
 * The name after `--operator`: given, and no option. A missing one is refused (decision 0269) rather than read as
 * the OS user, or the next option taken for a name, in the audit row that says who acted.
 */
function operatorName(value: string | undefined): string {
  if (!value?.trim() || value.startsWith('-')) {
    const errors = [{ path: '--operator', message: 'needs a name' }];
    throw new CambioError('VALIDATION_ERROR', '--operator needs a name (or leave it out: CAMBIO_OPERATOR)', { errors });
  }
  return value.trim();
}

/** Who acts, as a workflow decision records it. */
export const operatorActor = (): string => `operator:${operator}`;

/**
 * What an action knows besides its arguments joins its row, if noted before the action's transaction commits (the
 * row commits with it); a note made after that is too late and is dropped.
 */
export function auditNote(note: { target?: string; details?: Record<string, unknown> }): void {
  if (!pending || pending.committed || pending.carrier) return;
  if (note.target) pending.target = note.target;
  Object.assign(pending.details, note.details ?? {});
}

/**
 * Registers the hooks: an audited command's row is prepared before it runs (refusing to run without the chain's
 * key), and written inside the first transaction of the action that commits (`auditInTransactions`).
 */
export function auditCommands(program: Command): void {
  program.hook('preAction', (_root, command) => {
    const path = `${command.parent?.name()} ${command.name()}`;
    const action = AUDITED[path];
    if (!action) return;
    const { json: _json, reason, ...options } = command.opts() as Record<string, unknown>;
    const target = String(command.args[0] ?? options.name ?? '-');
    const key = auditKey(loadConfig());
    const why = typeof reason === 'string' ? reason : null;
    pending = { action, target, reason: why, details: { ...options }, key, committed: false };
  });
  // An action that succeeded without committing anything (nothing to be atomic with) still gets its row.
  program.hook('postAction', async () => {
    const entry = pending;
    pending = undefined;
    if (entry && !entry.committed && !entry.requested) await appendOwnRow(entry, 'OK');
  });
}

/**
 * For an action that commits nothing of ours (a schedule's pause, unpause or trigger: Temporal's state alone), the
 * row is written before the action, on its own, with outcome REQUESTED (decision 0305): written after it, a Postgres
 * gone in between left an action done and never audited. The action then succeeds with that row alone; a failure
 * adds a second row with its code (auditFailure). Postgres failing here ends the command before the action.
 */
export async function auditRequest(): Promise<void> {
  const entry = pending;
  if (!entry || entry.committed || entry.requested) return;
  await appendOwnRow(entry, 'REQUESTED');
  entry.requested = true;
}

/**
 * Makes the action's own transaction carry its audit row: the first transaction on `orm` that commits while an
 * audited command runs appends the row just before its COMMIT, so the action and its row commit together or not
 * at all. The CLI arms it around the action only (withServices), never around the reads that set it up.
 */
export function auditInTransactions(orm: Orm): void {
  const subscriber: EventSubscriber = {
    async beforeTransactionCommit(args: TransactionEventArgs) {
      const entry = pending;
      if (!entry || entry.committed || entry.carrier) return;
      entry.carrier = args.transaction;
      const connection = args.em.getConnection();
      const run = (sql: string, params: unknown[] = []) =>
        connection.execute(sql, params, 'all', args.transaction) as Promise<Record<string, unknown>[]>;
      const { action, target, reason } = entry;
      await appendAuditWith(
        run,
        { operator, action, target, reason, details: { ...entry.details, outcome: 'OK' } },
        entry.key,
      );
      crashPoint('before-commit');
    },
    async afterTransactionCommit(args: TransactionEventArgs) {
      if (!pending || pending.carrier !== args.transaction) return;
      pending.committed = true;
      crashPoint('after-commit');
    },
    async afterTransactionRollback(args: TransactionEventArgs) {
      if (pending && pending.carrier === args.transaction) pending.carrier = undefined;
    },
  };
  orm.em.getEventManager().registerSubscriber(subscriber);
}

/** Whether the running command's action has committed (its audit row with it): a failure after that left it done. */
export const actionCommitted = (): boolean => !!pending?.committed;

// Actions whose first commit may be followed by one the command makes itself, which a rerun of the same command
// makes and nothing else does: a return outside any provider is started, then completed (decision 0337).
const FINISHED_BY_RERUN = new Set(['payment.return']);

/** Whether the running command, committed and then failed, is finished by running it again (not by the worker). */
export const finishedByRerun = (): boolean => !!pending && FINISHED_BY_RERUN.has(pending.action);

/**
 * A refused or failed action is recorded too, with the error code it ended with, in a transaction of its own:
 * nothing of it committed (else its row is already there and this adds nothing). After a REQUESTED row it is the
 * second row of that request: how it ended.
 */
export async function auditFailure(err: unknown): Promise<void> {
  const entry = pending;
  pending = undefined;
  if (!entry || entry.committed) return;
  await appendOwnRow(entry, err instanceof CambioError ? err.code : 'ERROR');
}

async function appendOwnRow(entry: Pending, outcome: string): Promise<void> {
  const orm = await openCliOrm();
  try {
    const { action, target, reason } = entry;
    const row = { operator, action, target, reason, details: { ...entry.details, outcome } };
    await appendAudit(orm.em.fork(), row, entry.key);
  } finally {
    await orm.close(true);
  }
}
