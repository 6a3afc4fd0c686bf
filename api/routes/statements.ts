import { presentIssuedStatements } from '../../presenters/issued-statement';
import type Koa from 'koa';
import { Readable } from 'node:stream';
import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { listQuerySchema, ListQuery } from '../../lists/run-list';
import { ref } from '../schemas/responses';
import { getIssuedStatement, listIssuedStatements } from '../../services/issued-statements';
import { directionTotalOf, idParams } from '../schemas/common';
import { periodBoundSchema } from '../../domain/report-period';
import { ASSETS } from '../../domain/assets';
import { openStatement, type StatementSource } from '../../statements/statement';
import { statementJson } from '../../statements/formats/json';
import { statementCsv } from '../../statements/formats/csv';
import { assertCamt053Asset, statementCamt053 } from '../../statements/formats/camt053';
import { statementPdf } from '../../statements/formats/pdf';
import { statementDocument, type StatementDocument } from '../../statements/formats/document';
import { primed } from '../../statements/formats/ahead';
import { StatementSlots } from '../overload/statement-slots';
import { SLOT_WAIT_MS } from '../overload/stream-slots';
import { whenResponseEnds } from '../overload/response-end';
import type { Em } from '../../db/orm';

export const STATEMENT_FORMATS = ['json', 'csv', 'camt053', 'pdf'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

const MEDIA: Record<StatementFormat, { type: string; ext: string }> = {
  json: { type: 'application/json; charset=utf-8', ext: 'json' },
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  camt053: { type: 'application/xml; charset=utf-8', ext: 'xml' },
  pdf: { type: 'application/pdf', ext: 'pdf' },
};

export const formatProperty = {
  type: 'string',
  enum: STATEMENT_FORMATS,
  description:
    'json (default), csv, camt053 (ISO 20022 camt.053.001.08) or pdf; without it, the Accept header chooses ' +
    '(text/csv, application/xml, application/pdf). camt053 exists for ISO 4217 currencies only: a stablecoin ' +
    '(USDC, USDT, EURC, BRLT) is 422 FORMAT_NOT_SUPPORTED, whose details name json, csv and pdf',
} as const;

const statementQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['asset', 'periodStart', 'periodEnd'],
  properties: {
    asset: { type: 'string', enum: ASSETS },
    periodStart: { ...periodBoundSchema, description: `Inclusive. ${periodBoundSchema.description}` },
    periodEnd: { ...periodBoundSchema, description: `Exclusive, after periodStart. ${periodBoundSchema.description}` },
    format: formatProperty,
  },
} as const;

const directionTotal = directionTotalOf(0);

// The statement's other representations, for /openapi.json (MEDIA above sends them).
const statementOtherMedia = {
  'text/csv': { type: 'string', description: 'One line per entry, after a header line' },
  'application/xml': { type: 'string', description: 'ISO 20022 camt.053.001.08 BankToCustomerStatement' },
  'application/pdf': { type: 'string', format: 'binary' },
};

// What sendStatement sets beside the body, in every format, for /openapi.json.
const statementHeaders = {
  'X-Statement-Id': {
    description: "The statement's id: the same for the same account, asset and period (an issued statement's id)",
    schema: { type: 'string', format: 'uuid' },
  },
  'X-Statement-Opening-Balance': {
    description: "The booked balance at periodStart, a decimal string at the asset's scale (CSV has no header for it)",
    schema: { type: 'string', examples: ['1250.00'] },
  },
  'X-Statement-Closing-Balance': {
    description: 'The booked balance at periodEnd (as of now for a period not yet ended), a decimal string',
    schema: { type: 'string', examples: ['980.50'] },
  },
  'Content-Disposition': {
    description:
      "attachment, with a file name of the asset, the period and the format's extension " +
      '(statement-BRL-20261101T000000Z-20261201T000000Z.csv)',
    schema: { type: 'string' },
  },
};

// For /openapi.json (statements/formats/json.ts writes the body).
export const statementResponse = {
  type: 'object',
  required: [
    'id',
    'accountId',
    'asset',
    'periodStart',
    'periodEnd',
    'openingBalance',
    'entries',
    'closingBalance',
    'credits',
    'debits',
  ],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The same for the same account, asset and period' },
    accountId: { type: 'string', format: 'uuid' },
    asset: { type: 'string' },
    periodStart: { type: 'string', format: 'date-time' },
    periodEnd: { type: 'string', format: 'date-time' },
    openingBalance: ref('Amount'),
    entries: {
      type: 'array',
      description: 'Oldest first; one per posting that changed the booked total (holds are not entries)',
      items: {
        type: 'object',
        required: ['id', 'bookedAt', 'operationId', 'operationType', 'direction', 'amount', 'balanceAfter'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          bookedAt: { type: 'string', format: 'date-time' },
          operationId: { type: ['string', 'null'], format: 'uuid' },
          operationType: { type: ['string', 'null'] },
          direction: { type: 'string', enum: ['CREDIT', 'DEBIT'] },
          amount: ref('Amount'),
          balanceAfter: ref('Amount'),
          description: { type: 'string' },
          endToEnd: { type: 'string', description: 'Where the rail gave one' },
        },
      },
    },
    closingBalance: ref('Amount'),
    credits: directionTotal,
    debits: directionTotal,
  },
} as const;

/** `?format=` wins; else the Accept header; else JSON. */
export function chosenFormat(ctx: Koa.Context, format: unknown): StatementFormat {
  if (typeof format === 'string') return format as StatementFormat;
  ctx.vary('Accept');
  switch (ctx.accepts('application/json', 'text/csv', 'application/xml', 'application/pdf')) {
    case 'text/csv':
      return 'csv';
    case 'application/xml':
      return 'camt053';
    case 'application/pdf':
      return 'pdf';
    default:
      return 'json';
  }
}

/**
 * Streams the statement in the chosen format; the balances also travel as headers (for CSV, which has no header).
 * What a format cannot carry is refused here, before a header or a byte is sent (422 FORMAT_NOT_SUPPORTED).
 */
export async function sendStatement(
  ctx: Koa.Context,
  em: Em,
  slots: StatementSlots,
  source: StatementSource,
  format: StatementFormat,
  storedJson?: () => AsyncIterable<string>,
): Promise<void> {
  const h = source.header;
  if (format === 'camt053') assertCamt053Asset(h.asset);
  // Before a page is read: a paused stream holds its pages in this process until its client reads (decision 0251).
  const release = await slots.take(ctx.state.customerId, { pdf: format === 'pdf' });
  try {
    const doc = format === 'camt053' || format === 'pdf' ? await statementDocument(em, h) : null;
    const media = MEDIA[format];
    ctx.type = media.type;
    const stamp = (iso: string) => iso.replace(/\.000Z$/, 'Z').replace(/[-:]/g, '');
    const name = `statement-${h.asset}-${stamp(h.periodStart)}-${stamp(h.periodEnd)}.${media.ext}`;
    ctx.set('Content-Disposition', `attachment; filename="${name}"`);
    ctx.set('X-Statement-Id', h.id);
    ctx.set('X-Statement-Opening-Balance', h.openingBalance.value);
    ctx.set('X-Statement-Closing-Balance', h.closingBalance.value);
    // The first read of the body happens here, not once it streams: a database that fails on it is a 503 (0247).
    ctx.body =
      format === 'json' && storedJson
        ? Readable.from(await primed(storedJson()))
        : render({ header: h, pages: await primed(source.pages) }, format, doc);
  } catch (err) {
    release();
    throw err;
  }
  whenResponseEnds(ctx, release);
}

function render(source: StatementSource, format: StatementFormat, doc: StatementDocument | null): Readable {
  switch (format) {
    case 'csv':
      return Readable.from(statementCsv(source));
    case 'camt053':
      return Readable.from(statementCamt053(source, doc!));
    case 'pdf':
      return statementPdf(source, doc!);
    default:
      return Readable.from(statementJson(source));
  }
}

const issuedStatement = {
  type: 'object',
  required: ['id', 'accountId', 'asset', 'periodStart', 'periodEnd', 'sha256', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    accountId: { type: 'string', format: 'uuid' },
    asset: { type: 'string' },
    periodStart: { type: 'string', format: 'date-time' },
    periodEnd: { type: 'string', format: 'date-time' },
    sha256: {
      type: 'string',
      description: "SHA-256 (hex) of the statement's JSON form, as GET /api/statements/{id} returns it",
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export function statementRoutes(table: RouteTable, s: ServiceContext): void {
  const slots = new StatementSlots({
    max: s.config.statementStreamsMax,
    perCustomer: s.config.statementStreamsPerCustomer,
    waitMs: SLOT_WAIT_MS,
  });
  table.add({
    method: 'get',
    path: '/api/accounts/:accountId/statement',
    summary:
      'Statement of one asset over [periodStart, periodEnd): opening and closing balances, entries with the balance ' +
      'after each, totals per direction; JSON, CSV, camt.053.001.08 or PDF, streamed',
    tag: 'Statements',
    params: idParams('accountId'),
    query: statementQuery,
    response: {
      status: 200,
      schema: statementResponse,
      description: 'The Statement (or CSV, camt.053, PDF)',
      otherMedia: statementOtherMedia,
      headers: statementHeaders,
    },
    errors: ['INVALID_PERIOD', 'FORMAT_NOT_SUPPORTED'],
    async handler(ctx) {
      const q = ctx.state.query as { asset: string; periodStart: string; periodEnd: string; format?: string };
      const format = chosenFormat(ctx, q.format);
      // Refused before the period or the account is read: a stablecoin never has a camt.053 form.
      if (format === 'camt053') assertCamt053Asset(q.asset);
      const source = await openStatement(ctx.state.em, { accountId: ctx.params.accountId, ...q });
      await sendStatement(ctx, ctx.state.em, slots, source, format);
    },
  });
  issuedStatementRoutes(table, s, slots);
}

/** Issued statements: what the statement schedule stored, read back byte for byte. */
function issuedStatementRoutes(table: RouteTable, s: ServiceContext, slots: StatementSlots): void {
  table.add({
    method: 'get',
    path: '/api/statements',
    summary: 'List issued statements (filters: account.id, asset, periodStart, createdAt)',
    tag: 'Statements',
    query: listQuerySchema,
    response: {
      status: 200,
      schema: {
        type: 'object',
        properties: { data: { type: 'array', items: issuedStatement }, meta: ref('PageMeta') },
      },
    },
    async handler(ctx) {
      ctx.body = presentIssuedStatements(
        await listIssuedStatements(ctx.state.em, ctx.state.query as ListQuery, s.config.cursorSecret),
      );
    },
  });
  table.add({
    method: 'get',
    path: '/api/statements/:statementId',
    summary: 'An issued statement: its JSON form exactly as issued and hashed, or CSV, camt.053, PDF',
    tag: 'Statements',
    params: idParams('statementId'),
    query: { type: 'object', additionalProperties: false, properties: { format: formatProperty } },
    response: {
      status: 200,
      schema: statementResponse,
      description: 'The Statement (or CSV, camt.053, PDF)',
      otherMedia: statementOtherMedia,
      headers: statementHeaders,
    },
    errors: ['FORMAT_NOT_SUPPORTED'],
    async handler(ctx) {
      const format = chosenFormat(ctx, (ctx.state.query as { format?: string }).format);
      const issued = await getIssuedStatement(ctx.state.em, ctx.params.statementId);
      // Its JSON form is the stored text itself, byte for byte.
      await sendStatement(ctx, ctx.state.em, slots, issued.source, format, issued.json);
    },
  });
}
