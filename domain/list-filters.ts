// What a list request is made of, shared by the API (which parses it) and db/lists (which turns it into SQL): the
// filter's syntax tree, the per-resource field catalogues and the semantic check of a filter against one, and the
// keyset position. The catalogue is the allowlist: only fields named there can reach SQL, and its column
// expressions (`sql`, `jsonArray`, `prop`) are written in the repositories, never taken from the request.
import { CambioError } from './errors';
import { isUuid } from './uuid';

export const FILTER_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export type FilterNode =
  { kind: 'cond'; field: string; op: FilterOp; values: string[] } | { kind: 'and' | 'or'; children: FilterNode[] };

export type SortOrder = 'ASCENDING' | 'DESCENDING';
export type PageDirection = 'NEXT' | 'PREVIOUS';

/** A row's place in a list's ordering, as a verified cursor carries it (lists/cursor.ts). */
export interface CursorPosition {
  createdAt: string;
  id: string;
  sortOrder: SortOrder;
  /** The fingerprint of the filters it was issued with (decision 0275); absent on cursors issued before. */
  filters?: string;
}

export type FieldSpec =
  { type: 'string' } | { type: 'enum'; values: readonly string[] } | { type: 'timestamp' } | { type: 'uuid' };

/**
 * Where a field lives: a column expression (`o.status`), or a property of the elements of a
 * jsonb array column (`tags` = `[{"key":"team","value":"ops"}]`, field `tags.key` →
 * `{ jsonArray: 'o.tags', prop: 'key' }`), which matches when any element matches.
 */
export type FieldLocation = { sql: string } | { jsonArray: string; prop: string };

/**
 * `ops` narrows the operators a field takes below what its type allows (reports: `eq` only); without it, every
 * operator that fits the type.
 */
export type FieldCatalogue = Record<string, FieldSpec & FieldLocation & { ops?: readonly FilterOp[] }>;

// Ordering makes sense for instants and for text; on an enum or uuid it would compare by
// declaration order or bytes, which no client could reasonably mean.
const ORDERING_OPS: readonly FilterOp[] = ['gt', 'gte', 'lt', 'lte'];
const ORDERABLE_TYPES: readonly FieldSpec['type'][] = ['timestamp', 'string'];

// ISO 8601 with a full date and time; at most 6 fractional digits because Postgres keeps
// microseconds and would silently round anything finer.
const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(Z|[+-](\d{2}):(\d{2}))$/;

/**
 * True for `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` naming a real calendar instant. With
 * `allowOffset`, a `±HH:MM` offset and a space instead of `T` (Postgres' text output) are
 * also accepted.
 */
export function isIsoTimestamp(s: string, allowOffset = false): boolean {
  const m = TIMESTAMP_RE.exec(s);
  if (m === null) return false;
  const [, y, mo, d, h, mi, sec, zone, oh, om] = m;
  if (!allowOffset && (zone !== 'Z' || s[10] !== 'T')) return false;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  // Day 0 of the next month is the last day of this one; Date.UTC handles leap years.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return false;
  if (oh !== undefined && (Number(oh) > 15 || Number(om) > 59)) return false;
  return true;
}

/** Own-property lookup, so `constructor` or `__proto__` can never resolve to a prototype member. */
export function lookupField(catalogue: FieldCatalogue, field: string): FieldCatalogue[string] | undefined {
  return Object.prototype.hasOwnProperty.call(catalogue, field) ? catalogue[field] : undefined;
}

/** Throws INVALID_FILTER unless every condition names a catalogued field, a fitting op and valid values. */
export function validateFilters(node: FilterNode | null, catalogue: FieldCatalogue): void {
  if (node === null) return;
  if (node.kind !== 'cond') {
    for (const child of node.children) validateFilters(child, catalogue);
    return;
  }
  const { field, op, values } = node;
  const spec = lookupField(catalogue, field);
  if (spec === undefined) {
    const allowed = Object.keys(catalogue).sort().join(', ');
    invalid(`Unknown filter field '${field}'; allowed fields: ${allowed}`, { field });
  }
  if (spec.ops && !spec.ops.includes(op)) {
    invalid(`Operator '${op}' is not supported for field '${field}'; use ${spec.ops.join(', ')}`, { field, op });
  }
  if (ORDERING_OPS.includes(op) && !ORDERABLE_TYPES.includes(spec.type)) {
    invalid(`Operator '${op}' is not supported for ${spec.type} field '${field}'; use eq, ne or in`, { field, op });
  }
  if (op !== 'in' && values.length !== 1) {
    invalid(`Operator '${op}' on field '${field}' takes exactly one value`, { field, op });
  }
  for (const value of values) checkValue(field, spec, value);
}

function checkValue(field: string, spec: FieldSpec, value: string): void {
  // Postgres rejects NUL in text parameters with a driver error; report it as the client's mistake.
  if (value.includes('\u0000')) invalid(`Value for field '${field}' contains a NUL character`, { field });
  switch (spec.type) {
    case 'string':
      return;
    case 'timestamp':
      if (!isIsoTimestamp(value)) {
        invalid(
          `Value ${show(value)} for field '${field}' is not an ISO 8601 UTC timestamp such as 2024-01-31T12:00:00Z`,
          { field, value },
        );
      }
      return;
    case 'uuid':
      if (!isUuid(value)) invalid(`Value ${show(value)} for field '${field}' is not a UUID`, { field, value });
      return;
    case 'enum':
      if (!spec.values.includes(value)) {
        invalid(`Value ${show(value)} for field '${field}' must be one of ${spec.values.join(', ')}`, { field, value });
      }
      return;
  }
}

// Values are echoed back to help the client, but a huge one should not bloat the error body.
function show(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

function invalid(message: string, details: Record<string, unknown>): never {
  throw new CambioError('INVALID_FILTER', message, details);
}
