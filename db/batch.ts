import type { Em } from './orm';

/** One statement of a batch; `rows` is filled in when the batch has run. */
export interface Statement<R = Record<string, unknown>> {
  rows: R[];
}

interface Entry {
  sql: string;
  params: unknown[];
  result: Statement<unknown>;
  onError?: (err: unknown) => unknown;
}

/**
 * Statements that run one after the other in the caller's transaction, sent to Postgres as one message: one round
 * trip instead of one per statement, each statement exactly as it would run on its own and in the same order (so
 * lock order is what the order of `add` calls says). A statement that fails stops the rest, and the error aborts
 * the transaction, as a single failing statement does. Parameters are inlined by MikroORM's own formatter, as for
 * every `em.execute`.
 *
 * A statement cannot branch on an earlier one's result on the client: conditions go into the SQL (e.g. `where
 * exists (...)` on a row an earlier statement of the batch inserted).
 */
export class SqlBatch {
  private readonly entries: Entry[] = [];

  /** `onError` may turn a failure of the batch into a domain error (return it), or leave it (undefined). */
  add<R = Record<string, unknown>>(
    sql: string,
    params: unknown[] = [],
    onError?: (err: unknown) => unknown,
  ): Statement<R> {
    const result: Statement<R> = { rows: [] };
    this.entries.push({ sql, params, result: result as Statement<unknown>, onError });
    return result;
  }

  get size(): number {
    return this.entries.length;
  }

  async run(em: Em): Promise<void> {
    const entries = this.entries.splice(0);
    if (entries.length === 0) return;
    let out: unknown;
    try {
      out = await em.execute(
        entries.map((e) => e.sql).join(';\n'),
        entries.flatMap((e) => e.params),
      );
    } catch (err) {
      for (const e of entries) {
        const mapped = e.onError?.(err);
        if (mapped) throw mapped;
      }
      throw err;
    }
    // pg answers one statement with its rows and several with one row list per statement.
    const perStatement = (entries.length === 1 ? [out] : out) as unknown[][];
    entries.forEach((e, i) => {
      e.result.rows = perStatement[i];
    });
  }
}
