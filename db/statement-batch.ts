/**
 * Runs many callers' rows through one statement: a group commit for a hot single-statement request (the quote).
 * While `maxInFlight` batches are at Postgres, new rows wait; when one returns, every waiting row leaves in the next.
 * So a lone request leaves at once, and under load one round trip, one parse of the parameters and one COMMIT
 * serve many requests (decision 0104). Postgres spends about half the CPU per row, and the API about half the
 * driver's.
 *
 * - A row whose `keyOf` is already waiting or at Postgres gets `opts.busy` at once and never reaches a statement:
 *   a statement must not lock, read and write one key twice, and a request whose key another one holds is the
 *   concurrent duplicate the key's lock would have refused.
 * - The statement is all or nothing. A batch of several rows that fails runs again one row at a time, so a row
 *   that makes the statement fail fails alone, and a dependency that is down fails each row as it would have.
 *   Running a row again is safe because a failed statement wrote nothing; if it did commit before its connection
 *   broke, the rerun finds its own answer stored, as a client's retry would.
 */
export class StatementBatch<Row, Result> {
  private waiting: Array<{ row: Row; resolve: (r: Result) => void; reject: (e: unknown) => void }> = [];
  private inFlight = 0;
  /** The keys of the rows waiting or at Postgres. */
  private readonly held = new Set<string>();

  constructor(
    /** Runs the rows in one statement and returns one result per row, in the rows' order. */
    private readonly run: (rows: Row[]) => Promise<Result[]>,
    private readonly keyOf: (row: Row) => string,
    private readonly opts: { maxInFlight: number; maxRows: number; busy: (row: Row) => Result },
  ) {}

  async submit(row: Row): Promise<Result> {
    const key = this.keyOf(row);
    if (this.held.has(key)) return this.opts.busy(row);
    this.held.add(key);
    try {
      return await new Promise<Result>((resolve, reject) => {
        this.waiting.push({ row, resolve, reject });
        this.send();
      });
    } finally {
      this.held.delete(key);
    }
  }

  private send(): void {
    while (this.inFlight < this.opts.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.opts.maxRows);
      this.inFlight += 1;
      void this.runBatch(batch).finally(() => {
        this.inFlight -= 1;
        this.send();
      });
    }
  }

  private async runBatch(batch: typeof this.waiting): Promise<void> {
    try {
      const results = await this.run(batch.map((e) => e.row));
      batch.forEach((e, i) => e.resolve(results[i]));
    } catch (err) {
      if (batch.length === 1) batch[0].reject(err);
      else await Promise.all(batch.map((e) => this.runBatch([e])));
    }
  }
}
