import type { Command } from 'commander';
import { CustomerSchema } from '../../db/entities/customer';
import { systemEm, tenantEm } from '../../db/orm';
import { isUuid } from '../../domain/uuid';
import { notFound, validationError } from '../../domain/errors';
import { getReport } from '../../services/reports';
import { presentReport, reportCsv } from '../../presenters/report';
import { withServices } from '../context';

/**
 * `cambio report`: the customer's report through the same service as GET /api/reports, in that customer's tenant
 * scope. Prints a table by default, the API's JSON with --json, the API's CSV with --csv.
 */
export function reportCommands(program: Command): void {
  program
    .command('report')
    .description("a customer's settled inflows and outflows per asset over [--from, --to)")
    .requiredOption('--customer <customerId>', 'customer id')
    .requiredOption('--from <timestamp>', 'period start, inclusive (ISO 8601 UTC with Z, e.g. 2026-11-01T00:00:00Z)')
    .requiredOption('--to <timestamp>', 'period end, exclusive')
    .option(
      '--filters <filters>',
      'as the API: account.id, asset, tags.key, tags.value with eq; ";", and(...), or(...)',
    )
    .option('--json', 'print the report as the API returns it')
    .option('--csv', 'print the CSV the API returns for Accept: text/csv')
    .action(
      async (opts: { customer: string; from: string; to: string; filters?: string; json?: boolean; csv?: boolean }) => {
        if (!isUuid(opts.customer)) throw validationError('--customer', 'must be a UUID');
        const report = await withServices(async (s) => {
          if (!(await systemEm(s.orm).findOne(CustomerSchema, { id: opts.customer.toLowerCase() })))
            throw notFound('customer');
          return getReport(tenantEm(s.orm, opts.customer.toLowerCase()), {
            periodStart: opts.from,
            periodEnd: opts.to,
            filters: opts.filters,
          });
        });
        if (opts.csv) process.stdout.write(reportCsv(report));
        else if (opts.json) console.log(JSON.stringify(presentReport(report), null, 2));
        else console.log(table(report.period.start.echo, report.period.end.echo, reportCsv(report)));
      },
    );
}

/** The CSV rows as an aligned table under a period line, for a human at a terminal. */
function table(start: string, end: string, csv: string): string {
  const rows = csv
    .trim()
    .split('\r\n')
    .map((r) => r.split(','));
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) =>
    r.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  '),
  );
  return [
    `period ${start} .. ${end} (end exclusive)`,
    ...lines,
    ...(rows.length === 1 ? ['(no settled movements)'] : []),
  ].join('\n');
}
