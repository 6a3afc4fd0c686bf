import type { Command } from 'commander';
import { loadConfig } from '../../config';
import type { Orm } from '../../db/orm';
import { openCliOrm } from '../orm';
import { checkChain, listAudit } from '../../db/repositories/audit-log';
import { CambioError } from '../../domain/errors';
import { output } from '../context';
import { auditKey, isSandboxKey } from '../audit-key';

async function withOrm<T>(fn: (orm: Orm) => Promise<T>): Promise<T> {
  const orm = await openCliOrm();
  try {
    return await fn(orm);
  } finally {
    await orm.close(true);
  }
}

/** Operator actions are audited (decisions 0049, 0069): read and check the operators' audit log. */
export function auditCommands(program: Command): void {
  const audit = program.command('audit').description("the operators' audit log (append-only, hash-chained)");
  audit
    .command('list')
    .description('audit rows, oldest first')
    .option('--since <timestamp>', 'only rows at or after this ISO 8601 time')
    .option('--action <action>', 'only this action, e.g. payment.return')
    .option('--json', 'print JSON')
    .action(async (opts: { since?: string; action?: string; json?: boolean }) => {
      const since = opts.since ? new Date(opts.since) : undefined;
      if (since && Number.isNaN(since.getTime())) {
        const errors = [{ path: '--since', message: 'not a timestamp' }];
        throw new CambioError('VALIDATION_ERROR', '--since must be an ISO 8601 timestamp', { errors });
      }
      const rows = await withOrm((orm) => listAudit(orm.em.fork(), { since, action: opts.action }));
      const line = (r: (typeof rows)[number]) =>
        `${r.at} ${r.operator} ${r.action} ${r.target}${r.reason ? ` (${r.reason})` : ''} ${JSON.stringify(r.details)}`;
      const human = rows.map(line).join('\n');
      output(
        !!opts.json,
        rows.map(({ prevHash: _p, hash: _h, seq: _s, keyId: _k, ...r }) => r),
        human || 'no audit rows',
      );
    });
  audit
    .command('verify')
    .description(
      'check the keyed hash chain of the whole log (streamed); prints the row count and head hash, exits non-zero ' +
        'naming the first row that does not hold',
    )
    .option('--expect-head <hash>', 'a head hash noted earlier: fail unless it is still in the chain (a cut tail)')
    .option('--json', 'print JSON')
    .action(async (opts: { expectHead?: string; json?: boolean }) => {
      const key = auditKey(loadConfig());
      const check = await withOrm((orm) => checkChain(orm.em.fork(), key, { expectHead: opts.expectHead }));
      if (check.broken) {
        const { id, seq, action, at } = check.broken.row;
        const message = `audit log broken at row ${id} (#${seq}, ${action} at ${at}): ${check.broken.problem}`;
        throw new CambioError('INVALID_STATE', message, { id, seq });
      }
      if (opts.expectHead !== undefined && !check.sawExpected) {
        const message =
          `audit log does not hold the expected head ${opts.expectHead}: rows were cut off the end or the chain ` +
          `was rewritten (${check.rows} rows, head ${check.head || '(none)'})`;
        throw new CambioError('INVALID_STATE', message, { rows: check.rows, head: check.head });
      }
      const sandboxKey = isSandboxKey(key);
      const human =
        `audit log intact: ${check.rows} rows, head ${check.head || '(none)'}` +
        (sandboxKey ? ' (keyed with the public sandbox key: proves nothing against tampering)' : '');
      output(!!opts.json, { ok: true, rows: check.rows, head: check.head, keyId: key.id, sandboxKey }, human);
    });
}
