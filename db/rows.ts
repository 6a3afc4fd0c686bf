import type { EntitySchema } from '@mikro-orm/core';
import type { Em } from './orm';
import { MoneyType } from './types/money';

type Column = { prop: string; field: string; money: MoneyType | undefined; date: boolean; lazy: boolean };
const columnsOf = new WeakMap<object, Column[]>();
const selectLists = new WeakMap<object, Map<string, string>>();

/**
 * A row of the entity's columns (`selectColumns`, or fewer) as the entity's plain object, for read-only answers (a GET,
 * a list page): no identity map, no change-set snapshot, which is what `em.map` spends its time on. The columns come
 * from the entity's own metadata; pg returns uuid and text as strings, json as values and float8/int4 as numbers, so
 * only money (numeric, a string) becomes a Dec and timestamps (strings: MikroORM turns pg's date parsing off) become
 * Dates, with the platform's own parser, as em.map does. A column the select left out stays absent. Never for rows that
 * will be changed and flushed (those go through the EntityManager); a row changed by explicit SQL (the operation create
 * and steps, which write back what they change themselves) may start here.
 */
export function entityFromRow<T extends object>(em: Em, schema: EntitySchema<T>, row: Record<string, unknown>): T {
  const columns = entityColumns(em, schema);
  const platform = em.getPlatform();
  const out: Record<string, unknown> = {};
  for (const c of columns) {
    if (!(c.field in row)) continue;
    const value = row[c.field];
    if (c.money) out[c.prop] = c.money.convertToJSValue(value as string | null);
    else if (c.date && typeof value === 'string') out[c.prop] = platform.parseDate(value);
    else out[c.prop] = value;
  }
  return out as T;
}

/**
 * The entity's columns as a select list, `alias.column, ...` (lazy ones, e.g. a document's content, left out),
 * for the statements that `entityFromRow` maps. Named columns rather than `*` keep a prepared statement's result
 * type fixed when a migration adds a column: with `*`, a process still running would get "cached plan must not
 * change result type" on every connection that prepared it, until restarted.
 */
export function selectColumns<T extends object>(em: Em, schema: EntitySchema<T>, alias: string): string {
  let byAlias = selectLists.get(schema);
  if (!byAlias) selectLists.set(schema, (byAlias = new Map()));
  let list = byAlias.get(alias);
  if (!list) {
    list = entityColumns(em, schema)
      .filter((c) => !c.lazy)
      .map((c) => `${alias}.${c.field}`)
      .join(', ');
    byAlias.set(alias, list);
  }
  return list;
}

function entityColumns<T extends object>(em: Em, schema: EntitySchema<T>): Column[] {
  let columns = columnsOf.get(schema);
  if (!columns) {
    const meta = em.getMetadata().get(schema.meta.className);
    columns = Object.values(meta.props)
      .filter((p) => p.fieldNames?.length === 1 && p.persist !== false)
      .map((p) => ({
        prop: p.name,
        field: p.fieldNames[0],
        money: p.customType instanceof MoneyType ? p.customType : undefined,
        date: p.runtimeType === 'Date',
        lazy: p.lazy === true,
      }));
    columnsOf.set(schema, columns);
  }
  return columns;
}
