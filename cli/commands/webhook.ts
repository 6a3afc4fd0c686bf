import type { Command } from 'commander';
import { systemEm, tenantEm } from '../../db/orm';
import { findLogScope, redeliver } from '../../webhooks/execution-logs';
import { notFound } from '../../domain/errors';
import { isUuid } from '../../domain/uuid';
import { output, withServices } from '../context';
import { targetId } from '../ids';

export function webhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('webhook deliveries');
  webhook
    .command('redeliver <logId>')
    .description(
      'send a delivery again (same message id and body), one attempt; fails while it is still being attempted',
    )
    .option('--json', 'print JSON')
    .action(async (logId: string, opts: { json?: boolean }) => {
      if (!isUuid(logId)) throw notFound('execution log');
      // In lower case, as every id the CLI acts on and the audit row names (cli/ids.ts).
      const id = targetId(logId, 'execution log');
      const log = await withServices(async (s) => {
        // Operators act across customers: find the log's customer, then act in that customer's scope.
        const scope = await findLogScope(systemEm(s.orm), id);
        return redeliver(s, tenantEm(s.orm, scope.customerId), scope.subscriptionId, id);
      });
      output(!!opts.json, log, `redelivery of ${log.id} (message ${log.messageId}) started`);
    });
}
