import type { EntitySchema } from '@mikro-orm/core';
import type { Em } from './orm';
import { MoneyType } from './types/money';

type Column = { prop: string; field: string; money: MoneyType | undefined; date: boolean };
const columnsOf = new WeakMap<object, Column[]>();

/**
 * A row of `select *` (or fewer columns) as the entity's plain object, for read-only answers (a GET, a list page):
 * no identity map, no change-set snapshot, which is what `em.map` spends its time on. The columns come from the
 * entity's own metadata; pg returns uuid and text as strings, json as values and float8/int4 as numbers, so only
 * money (numeric, a string) becomes a Dec and timestamps (strings: MikroORM turns pg's date parsing off) become
 * Dates, with the platform's own parser, as em.map does. A column the select left out stays absent. Never for rows
 * that will be changed and flushed (those go through the EntityManager); a row changed by explicit SQL (the operation
 * create and steps, which write back what they change themselves) may start here.
 */
export function entityFromRow<T extends object>(em: Em, schema: EntitySchema<T>, row: Record<string, unknown>): T {
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
      }));
    columnsOf.set(schema, columns);
  }
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
