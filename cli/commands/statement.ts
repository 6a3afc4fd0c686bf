import type { Command } from 'commander';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AccountSchema } from '../../db/entities';
import { systemEm, tenantEm } from '../../db/orm';
import { ASSETS, isAssetCode } from '../../domain/assets';
import { isUuid } from '../../domain/uuid';
import { notFound, validationError } from '../../domain/errors';
import { openStatement } from '../../statements/statement';
import { statementJson } from '../../statements/formats/json';
import { statementCsv } from '../../statements/formats/csv';
import { statementDocument } from '../../statements/formats/document';
import { withServices } from '../context';

const FORMATS = ['json', 'csv', 'camt053', 'pdf'];
// The PDF and camt.053 writers are loaded by the command that prints one: pdfkit and its font, loaded by every
// command at start, would cost each `cambio` run about 0.2 s.

/**
 * `cambio statement <accountId>`: the statement GET /api/accounts/{id}/statement answers, in the account's customer's
 * scope, streamed to stdout in the chosen format.
 */
export function statementCommands(program: Command): void {
  program
    .command('statement <accountId>')
    .description("an account's statement of one asset over [--from, --to), to stdout")
    .requiredOption('--asset <asset>', 'asset code, e.g. BRL')
    .requiredOption('--from <timestamp>', 'period start, inclusive (ISO 8601 UTC with Z, e.g. 2026-11-01T00:00:00Z)')
    .requiredOption('--to <timestamp>', 'period end, exclusive')
    .option('--format <format>', 'json, csv, camt053 or pdf', 'json')
    .action(async (accountId: string, opts: { asset: string; from: string; to: string; format: string }) => {
      if (!isUuid(accountId)) throw validationError('accountId', 'must be a UUID');
      if (!FORMATS.includes(opts.format)) throw validationError('--format', `must be one of ${FORMATS.join(', ')}`);
      const asset = opts.asset.toUpperCase();
      if (!isAssetCode(asset)) throw validationError('--asset', `must be one of ${ASSETS.join(', ')}`);
      await withServices(async (s) => {
        const account = await systemEm(s.orm).findOne(AccountSchema, { id: accountId.toLowerCase() });
        if (!account) throw notFound('account');
        const camt053 = opts.format === 'camt053' ? await import('../../statements/formats/camt053') : null;
        camt053?.assertCamt053Asset(asset);
        const em = tenantEm(s.orm, account.customerId);
        const source = await openStatement(em, {
          accountId: account.id,
          asset,
          periodStart: opts.from,
          periodEnd: opts.to,
        });
        const doc = opts.format === 'pdf' || camt053 ? await statementDocument(em, source.header) : null;
        const out =
          opts.format === 'pdf'
            ? (await import('../../statements/formats/pdf')).statementPdf(source, doc!)
            : Readable.from(
                opts.format === 'csv'
                  ? statementCsv(source)
                  : camt053
                    ? camt053.statementCamt053(source, doc!)
                    : statementJson(source),
              );
        await pipeline(out, process.stdout, { end: false });
      });
    });
}
