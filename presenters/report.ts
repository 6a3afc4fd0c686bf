import type { Report } from '../services/reports';
import { amount } from '../domain/amount';

/** Spec Report: `period` echoes the bounds as toISOString() writes them; `totals` sorted by asset. */
export function presentReport(report: Report) {
  const totals: Array<{ asset: string; inflows?: unknown; outflows?: unknown }> = [];
  for (const line of report.lines) {
    let entry = totals[totals.length - 1];
    if (entry?.asset !== line.asset) {
      entry = { asset: line.asset };
      totals.push(entry);
    }
    entry[line.direction === 'INFLOW' ? 'inflows' : 'outflows'] = {
      sum: amount(line.sum, line.asset),
      count: line.count,
    };
  }
  return { period: { start: report.period.start.echo, end: report.period.end.echo }, totals };
}

export const REPORT_CSV_HEADER = 'asset,direction,sum,count';

/**
 * The same report for spreadsheets: one row per asset and direction (INFLOW, OUTFLOW), sums in the asset's
 * scale, CRLF line ends (RFC 4180). Nothing needs quoting: codes, words and decimal numbers only.
 */
export function reportCsv(report: Report): string {
  const rows = report.lines.map((l) => [l.asset, l.direction, amount(l.sum, l.asset).value, String(l.count)].join(','));
  return [REPORT_CSV_HEADER, ...rows].map((row) => `${row}\r\n`).join('');
}
