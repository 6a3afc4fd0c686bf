import type { RouteTable } from './define';
import { periodBoundSchema } from '../../domain/report-period';
import { getReport, ReportQuery } from '../../services/reports';
import { presentReport, reportCsv } from '../../presenters/report';
import { directionTotalOf } from '../schemas/common';

export const reportQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['periodStart', 'periodEnd'],
  properties: {
    periodStart: { ...periodBoundSchema, description: `Inclusive. ${periodBoundSchema.description}` },
    periodEnd: { ...periodBoundSchema, description: `Exclusive, after periodStart. ${periodBoundSchema.description}` },
    filters: {
      type: 'string',
      maxLength: 4096,
      description: 'account.id, asset, tags.key, tags.value with eq; ";", and(...), or(...)',
    },
  },
} as const;

const directionTotal = directionTotalOf(1);

// For /openapi.json (the presenter builds the body).
export const reportResponse = {
  type: 'object',
  required: ['period', 'totals'],
  properties: {
    period: {
      type: 'object',
      required: ['start', 'end'],
      properties: { start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' } },
    },
    totals: {
      type: 'array',
      items: {
        type: 'object',
        required: ['asset'],
        properties: { asset: { type: 'string' }, inflows: directionTotal, outflows: directionTotal },
      },
    },
  },
} as const;

export function reportRoutes(table: RouteTable): void {
  table.add({
    method: 'get',
    path: '/api/reports',
    summary:
      'Settled inflows and outflows per asset over [periodStart, periodEnd); `Accept: text/csv` for CSV ' +
      '(asset,direction,sum,count)',
    tag: 'Reports',
    query: reportQuery,
    // Its query has no cursor, so the list codes are not implied: a bad period and a bad filter are its own.
    errors: ['INVALID_PERIOD', 'INVALID_FILTER'],
    response: {
      status: 200,
      schema: reportResponse,
      description: 'The Report (or CSV with Accept: text/csv)',
      otherMedia: { 'text/csv': { type: 'string', description: 'asset,direction,sum,count, one line per total' } },
    },
    async handler(ctx) {
      const report = await getReport(ctx.state.em, ctx.state.query as ReportQuery);
      ctx.vary('Accept'); // one URL, two representations: caches must key on Accept
      if (ctx.accepts('application/json', 'text/csv') === 'text/csv') {
        ctx.type = 'text/csv; charset=utf-8';
        const filename = `cambio-report-${compact(report.period.start.echo)}-${compact(report.period.end.echo)}.csv`;
        ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
        ctx.body = reportCsv(report);
        return;
      }
      ctx.body = presentReport(report);
    },
  });
}

// 2026-11-01T00:00:00.000Z → 20261101T000000Z: no ':' (not allowed in Windows file names).
const compact = (iso: string) => iso.replace(/\.000Z$/, 'Z').replace(/[-:]/g, '');
