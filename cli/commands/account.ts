import type { Command } from 'commander';
import { AccountSchema } from '../../db/entities/account';
import { systemEm, tenantEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { notFound } from '../../domain/errors';
import type { ServiceContext } from '../../services/context';
import { presentAccountRecord, type AccountView } from '../../presenters/account';
import { tagAccount } from '../../services/accounts';
import { decideAccountReview } from '../../services/account-review';
import { output, withServices, withTemporalServices } from '../context';
import { operatorActor } from '../audit';
import { targetId } from '../ids';

/**
 * Operators act across customers, but the services then run in the account's own tenant scope: the same
 * code path, and the same isolation, as the customer's API calls.
 */
async function accountScope(s: ServiceContext, accountId: string): Promise<Em> {
  const account = await systemEm(s.orm).findOne(AccountSchema, { id: accountId });
  if (!account) throw notFound('account');
  return tenantEm(s.orm, account.customerId);
}

const summary = (a: AccountView) => `account ${a.id} ${a.currentState.status}`;

export function accountCommands(program: Command): void {
  const account = program.command('account').description('account onboarding reviews and tags');

  account
    .command('approve <accountId>')
    .description('approve an account UNDER_REVIEW: it becomes ACTIVE with all its assets')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const accountId = targetId(typed, 'account');
      const view = await withTemporalServices(async (s) =>
        presentAccountRecord(
          await decideAccountReview(
            s,
            await accountScope(s, accountId),
            accountId,
            { decision: 'APPROVE' },
            operatorActor(),
          ),
        ),
      );
      output(!!opts.json, view, summary(view));
    });

  account
    .command('reject <accountId>')
    .description('reject an account UNDER_REVIEW: it returns to ACTION_REQUIRED with the reason')
    .requiredOption('--reason <reason>', 'why, shown to the customer (at most 255 characters)')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { reason: string; json?: boolean }) => {
      const accountId = targetId(typed, 'account');
      const view = await withTemporalServices(async (s) =>
        presentAccountRecord(
          await decideAccountReview(
            s,
            await accountScope(s, accountId),
            accountId,
            { decision: 'REJECT', reason: opts.reason },
            operatorActor(),
          ),
        ),
      );
      output(!!opts.json, view, `${summary(view)}: ${opts.reason}`);
    });

  account
    .command('tag <accountId>')
    .description('add or replace (by key) a tag on an account')
    .requiredOption('--key <key>', 'tag key')
    .requiredOption('--value <value>', 'tag value')
    .option('--propagate', 'copy the tag onto every operation created on the account from now on')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { key: string; value: string; propagate?: boolean; json?: boolean }) => {
      const accountId = targetId(typed, 'account');
      const tag = { key: opts.key, value: opts.value, propagate: !!opts.propagate };
      const view = await withServices(async (s) =>
        presentAccountRecord(await tagAccount(await accountScope(s, accountId), accountId, tag)),
      );
      output(
        !!opts.json,
        view,
        `${summary(view)} tagged ${opts.key}=${opts.value}${tag.propagate ? ' (propagates)' : ''}`,
      );
    });
}
