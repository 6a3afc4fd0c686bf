import os from 'node:os';
import type { Command } from 'commander';
import { loadConfig } from '../config';
import { openOrm } from '../db/orm';
import { appendAudit } from '../db/repositories/audit-log';
import { CambioError } from '../domain/errors';

// docs/decisions.md, "Operator actions are audited": the commands that act, and the action each one records.
// Reads (lists, reports, the audit log itself) record nothing.
const AUDITED: Record<string, string> = {
  'customer create': 'customer.create',
  'customer disable': 'customer.disable',
  'customer enable': 'customer.enable',
  'customer rotate-secret': 'customer.rotate-secret',
  'account approve': 'account.approve',
  'account reject': 'account.reject',
  'account tag': 'account.tag',
  'instruction approve': 'instruction.approve',
  'instruction reject': 'instruction.reject',
  'withdrawal approve': 'withdrawal.approve',
  'withdrawal reject': 'withdrawal.reject',
  'deposit replay': 'deposit.replay',
  'deposit pay': 'deposit.pay',
  'payment return': 'payment.return',
  'payment credit': 'payment.credit',
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
    if (argv[i] === '--operator') named = argv[++i];
    else if (argv[i].startsWith('--operator=')) named = argv[i].slice('--operator='.length);
    else rest.push(argv[i]);
  }
  operator = named || process.env.CAMBIO_OPERATOR || os.userInfo().username;
  return rest;
}

/** What an action learns only once it has run (the customer it created, the deposit it made) joins its row. */
export function auditNote(note: { target?: string; details?: Record<string, unknown> }): void {
  if (!pending) return;
  if (note.target) pending.target = note.target;
  Object.assign(pending.details, note.details ?? {});
}

/** Registers the hooks: an audited command's row is appended after it ran, or after it failed (`auditFailure`). */
export function auditCommands(program: Command): void {
  program.hook('preAction', (_root, command) => {
    const path = `${command.parent?.name()} ${command.name()}`;
    const action = AUDITED[path];
    if (!action) return;
    const { json: _json, reason, ...options } = command.opts() as Record<string, unknown>;
    const target = String(command.args[0] ?? options.name ?? '-');
    pending = { action, target, reason: typeof reason === 'string' ? reason : null, details: { ...options } };
  });
  program.hook('postAction', async () => {
    await flush('OK');
  });
}

/** A refused or failed action is recorded too, with the error code it ended with. */
export async function auditFailure(err: unknown): Promise<void> {
  await flush(err instanceof CambioError ? err.code : 'ERROR');
}

async function flush(outcome: string): Promise<void> {
  const entry = pending;
  pending = undefined;
  if (!entry) return;
  const orm = await openOrm(loadConfig().databaseUrl, { poolMax: 1 });
  try {
    const { action, target, reason } = entry;
    await appendAudit(orm.em.fork(), { operator, action, target, reason, details: { ...entry.details, outcome } });
  } finally {
    await orm.close(true);
  }
}
