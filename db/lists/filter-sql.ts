// Compiles a validated filter AST into a knex-raw style SQL boolean expression.
//
// Every user-supplied value becomes a `?` placeholder with its value in `params`; the only text
// embedded in the SQL comes from the catalogue (column expressions, jsonb array columns and
// property names), which is code, not input. Every node's output is parenthesised so callers can
// splice it into `WHERE ... AND <expr>` without worrying about precedence.
import {
  FieldCatalogue,
  FieldLocation,
  FieldSpec,
  FilterNode,
  FilterOp,
  lookupField,
  validateFilters,
} from '../../domain/list-filters';

export interface CompiledFilter {
  sql: string;
  params: unknown[];
}

const COMPARATORS: Record<Exclude<FilterOp, 'in'>, string> = {
  eq: '=',
  ne: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

// `prop` is spliced into a string literal (e->>'prop'); the catalogue is trusted, but a quote or
// a `?` there would break the statement or shift the placeholders, so refuse such a catalogue.
const SAFE_PROP_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `null` (no filter) compiles to `true` so callers can always AND the result in. */
export function compileFilters(node: FilterNode | null, catalogue: FieldCatalogue): CompiledFilter {
  if (node === null) return { sql: 'true', params: [] };
  validateFilters(node, catalogue);
  const params: unknown[] = [];
  const sql = compileNode(node, catalogue, params);
  return { sql, params };
}

function compileNode(node: FilterNode, catalogue: FieldCatalogue, params: unknown[]): string {
  if (node.kind !== 'cond') {
    const joiner = node.kind === 'and' ? ' AND ' : ' OR ';
    return `(${node.children.map((child) => compileNode(child, catalogue, params)).join(joiner)})`;
  }
  const spec = lookupField(catalogue, node.field);
  if (spec === undefined) throw new Error(`unreachable: field '${node.field}' passed validation`);
  // Postgres compares uuid columns case-insensitively but jsonb text case-sensitively; ids are
  // stored lower-case, so normalising here makes both kinds of field behave the same.
  const values = spec.type === 'uuid' ? node.values.map((v) => v.toLowerCase()) : node.values;
  params.push(...values);
  return `(${compileCondition(spec, node.op, values.length)})`;
}

function compileCondition(spec: FieldSpec & FieldLocation, op: FilterOp, valueCount: number): string {
  // Timestamps travel as strings (keeping microseconds a JS Date would lose) and are cast in SQL.
  const placeholder = spec.type === 'timestamp' ? '?::timestamptz' : '?';
  if ('sql' in spec) return predicate(spec.sql, op, placeholder, valueCount);

  if (!SAFE_PROP_RE.test(spec.prop)) throw new Error(`unsafe jsonb property name in catalogue: ${spec.prop}`);
  const text = `e->>'${spec.prop}'`;
  const element = spec.type === 'timestamp' ? `(${text})::timestamptz` : text;
  // `ne` on an array means "no element equals", not "some element differs": a resource tagged
  // team=ops must not match tags.value[ne]=ops just because it also has another tag.
  const positive = op === 'ne' ? 'eq' : op;
  const subquery =
    `SELECT 1 FROM jsonb_array_elements(${spec.jsonArray}) AS e ` +
    `WHERE ${predicate(element, positive, placeholder, valueCount)}`;
  return op === 'ne' ? `NOT EXISTS (${subquery})` : `EXISTS (${subquery})`;
}

function predicate(target: string, op: FilterOp, placeholder: string, valueCount: number): string {
  if (op === 'in') return `${target} in (${Array(valueCount).fill(placeholder).join(', ')})`;
  return `${target} ${COMPARATORS[op]} ${placeholder}`;
}
