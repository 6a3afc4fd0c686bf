import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AccountSchema } from '../../db/entities/account';
import { systemEm, tenantEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { accountsUnderReview, documentOfAnyCustomer } from '../../db/repositories/accounts';
import { notFound, validationError } from '../../domain/errors';
import { reviewRound } from '../../domain/states';
import type { ServiceContext } from '../../services/context';
import { presentAccountRecord, presentDocument, type AccountView } from '../../presenters/account';
import { recordOf, tagAccount } from '../../services/accounts';
import { decideAccountReview } from '../../services/account-review';
import { output, withServices, withTemporalServices } from '../context';
import { auditRequest, operatorActor } from '../audit';
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

const ROUND_HELP = 'the review round you read (cambio account list): refused if the customer has resubmitted since';

/** `--round`: a whole number from 1. */
function roundNumber(value: string): number {
  if (!/^[1-9]\d{0,5}$/.test(value)) throw validationError('--round', 'must be a whole number from 1');
  return Number(value);
}

/**
 * An account waiting for a decision as an operator weighs it (decision 0351): its owner, the UBOs the approval marks
 * VERIFIED and the documents it marks ACCEPTED (those waiting for verification), each document's id for
 * `cambio account document`.
 */
async function underReviewRow(s: ServiceContext, account: Parameters<typeof recordOf>[1]) {
  const record = await recordOf(tenantEm(s.orm, account.customerId), account);
  const view = presentAccountRecord(record);
  return {
    id: view.id,
    customerId: view.customer.id,
    owner: { legalName: view.owner.legalName, taxId: view.owner.taxId },
    // What `approve --round` and `reject --round` name: a decision is then refused if the customer resubmitted.
    round: reviewRound(account),
    since: view.currentState.createdAt,
    ubos: view.owner.ubos.map((u) => ({
      id: u.id,
      name: u.name,
      taxId: u.taxId,
      ownershipPercentage: u.ownershipPercentage,
    })),
    documents: record.documents.filter((d) => d.status === 'PENDING_VERIFICATION').map(presentDocument),
  };
}

function underReviewLine(r: Awaited<ReturnType<typeof underReviewRow>>): string {
  const who = (uboId: string | null) => (uboId ? ` of ${r.ubos.find((u) => u.id === uboId)?.name ?? uboId}` : '');
  const docs = r.documents.map((d) => `${d.documentType}${who(d.uboId)} ${d.id}`).join(', ') || 'none';
  return (
    `${r.id} round ${r.round} ${r.owner.legalName} (${r.owner.taxId.type} ${r.owner.taxId.value}) of customer ` +
    `${r.customerId} since ${r.since}: ${r.ubos.length} UBO(s); documents to verify: ${docs}`
  );
}

export function accountCommands(program: Command): void {
  const account = program.command('account').description('account onboarding reviews and tags');

  account
    .command('list')
    .description(
      'list the accounts waiting for a review decision (UNDER_REVIEW) across customers, longest waiting first, ' +
        'with their UBOs and the documents an approval accepts',
    )
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = await withServices(async (s) =>
        Promise.all((await accountsUnderReview(systemEm(s.orm))).map((a) => underReviewRow(s, a))),
      );
      output(!!opts.json, rows, rows.map(underReviewLine).join('\n') || 'no accounts waiting for review');
    });

  account
    .command('document <documentId>')
    .description("an onboarding document's content, to read before a decision: to --out, else to stdout (audited)")
    .option('--out <file>', 'write the content to this file')
    .option('--json', "with --out: print the document's record (no content) as JSON")
    .action(async (typed: string, opts: { out?: string; json?: boolean }) => {
      const documentId = targetId(typed, 'document');
      if (!opts.out && process.stdout.isTTY)
        throw validationError('--out', 'is needed on a terminal: the content is binary');
      // The read commits nothing that could carry its audit row: the row is written first (decision 0305), so no
      // document is shown without one.
      await auditRequest();
      const doc = await withServices((s) => documentOfAnyCustomer(systemEm(s.orm), documentId));
      if (!doc) throw notFound('document');
      if (!opts.out) {
        process.stdout.write(doc.content);
        return;
      }
      await writeFile(opts.out, doc.content);
      const record = { ...presentDocument(doc), accountId: doc.accountId, customerId: doc.customerId, file: opts.out };
      output(
        !!opts.json,
        record,
        `document ${doc.id} (${doc.fileName}, ${doc.sizeBytes} bytes) written to ${opts.out}`,
      );
    });

  account
    .command('approve <accountId>')
    .description('approve an account UNDER_REVIEW: it becomes ACTIVE with all its assets')
    .option('--round <n>', ROUND_HELP, roundNumber)
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { round?: number; json?: boolean }) => {
      const accountId = targetId(typed, 'account');
      const view = await withTemporalServices(async (s) =>
        presentAccountRecord(
          await decideAccountReview(
            s,
            await accountScope(s, accountId),
            accountId,
            { decision: 'APPROVE' },
            operatorActor(),
            opts.round,
          ),
        ),
      );
      output(!!opts.json, view, summary(view));
    });

  account
    .command('reject <accountId>')
    .description('reject an account UNDER_REVIEW: it returns to ACTION_REQUIRED with the reason')
    .requiredOption('--reason <reason>', 'why, shown to the customer (at most 255 characters)')
    .option('--round <n>', ROUND_HELP, roundNumber)
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { reason: string; round?: number; json?: boolean }) => {
      const accountId = targetId(typed, 'account');
      const view = await withTemporalServices(async (s) =>
        presentAccountRecord(
          await decideAccountReview(
            s,
            await accountScope(s, accountId),
            accountId,
            { decision: 'REJECT', reason: opts.reason },
            operatorActor(),
            opts.round,
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
