// EXPLAIN ANALYZE for the benches: where a statement's time goes, database side.
import type { Client } from 'pg';

/** `?` placeholders (knex style, as runList and reportSql write them) → `$n` for pg. */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Runs `sql` (pg placeholders) under EXPLAIN ANALYZE: its execution time and its plan, compactly. */
export async function explainAnalyze(
  pg: Client,
  sql: string,
  params: unknown[],
): Promise<{ ms: number; node: string }> {
  const res = await pg.query(`explain (analyze, buffers, format json) ${sql}`, params);
  const plan = res.rows[0]['QUERY PLAN'][0];
  return { ms: plan['Execution Time'] as number, node: describePlan(plan.Plan) };
}

/** "Index Scan using accounts_list_index rows=11" and its children, compactly. */
function describePlan(node: any): string {
  const parts: string[] = [];
  const walk = (n: any) => {
    let s = n['Node Type'];
    if (n['Scan Direction'] === 'Backward') s += ' Backward';
    if (n['Index Name']) s += ` ${n['Index Name']}`;
    if (n['Workers Launched'] !== undefined) s += ` x${n['Workers Launched'] + 1}`;
    s += ` rows=${n['Actual Rows']}`;
    if (n['Rows Removed by Filter']) s += ` removed=${n['Rows Removed by Filter']}`;
    if (n['Heap Fetches'] !== undefined) s += ` heapFetches=${n['Heap Fetches']}`;
    parts.push(s);
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(node);
  return parts.join(' > ');
}
