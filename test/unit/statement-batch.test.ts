import { expect } from 'chai';
import { StatementBatch } from '../../db/statement-batch';

interface Row {
  key: string;
  n: number;
}

/** A statement whose batches the test ends by hand: `runs` holds each batch's rows and its `finish`. */
function heldStatement(fail: (row: Row) => boolean = () => false) {
  const runs: Array<{ rows: Row[]; finish: () => void }> = [];
  const run = (rows: Row[]) =>
    new Promise<number[]>((resolve, reject) => {
      runs.push({
        rows,
        finish: () => (rows.some(fail) ? reject(new Error('bad row')) : resolve(rows.map((r) => r.n * 10))),
      });
    });
  return { runs, run };
}

const busy = () => -1;
const tick = () => new Promise((resolve) => setImmediate(resolve));
const row = (key: string, n: number): Row => ({ key, n });

describe('StatementBatch', () => {
  it('sends a lone row at once, and the rows that wait meanwhile together, each with its own result', async () => {
    const { runs, run } = heldStatement();
    const batch = new StatementBatch(run, (r: Row) => r.key, { maxInFlight: 1, maxRows: 100, busy });
    const first = batch.submit(row('a', 1));
    expect(runs.map((r) => r.rows)).to.deep.equal([[row('a', 1)]]);
    const waiting = [batch.submit(row('b', 2)), batch.submit(row('c', 3)), batch.submit(row('d', 4))];
    expect(runs).to.have.length(1);
    runs[0].finish();
    expect(await first).to.equal(10);
    await tick();
    expect(runs.map((r) => r.rows)).to.deep.equal([[row('a', 1)], [row('b', 2), row('c', 3), row('d', 4)]]);
    runs[1].finish();
    expect(await Promise.all(waiting)).to.deep.equal([20, 30, 40]);
  });

  it('keeps at most maxInFlight batches out, of at most maxRows rows', async () => {
    const { runs, run } = heldStatement();
    const batch = new StatementBatch(run, (r: Row) => r.key, { maxInFlight: 2, maxRows: 2, busy });
    const results = ['a', 'b', 'c', 'd', 'e'].map((key, n) => batch.submit(row(key, n)));
    expect(runs.map((r) => r.rows.map((x) => x.key))).to.deep.equal([['a'], ['b']]);
    runs[0].finish();
    await tick();
    expect(runs.map((r) => r.rows.map((x) => x.key))).to.deep.equal([['a'], ['b'], ['c', 'd']]);
    runs[1].finish();
    await tick();
    runs[2].finish();
    await tick();
    runs[3].finish();
    expect(await Promise.all(results)).to.deep.equal([0, 10, 20, 30, 40]);
    expect(runs.map((r) => r.rows.map((x) => x.key))).to.deep.equal([['a'], ['b'], ['c', 'd'], ['e']]);
  });

  it('answers busy at once for a key waiting or at Postgres, and takes the key again once it is done', async () => {
    const { runs, run } = heldStatement();
    const batch = new StatementBatch(run, (r: Row) => r.key, { maxInFlight: 1, maxRows: 100, busy });
    const atPostgres = batch.submit(row('k', 1));
    const waiting = batch.submit(row('m', 2));
    expect(await batch.submit(row('k', 3)), 'its key is at Postgres').to.equal(-1);
    expect(await batch.submit(row('m', 4)), 'its key is waiting').to.equal(-1);
    runs[0].finish();
    expect(await atPostgres).to.equal(10);
    await tick();
    const again = batch.submit(row('k', 5));
    runs[1].finish();
    expect(await waiting).to.equal(20);
    await tick();
    expect(runs.map((r) => r.rows)).to.deep.equal([[row('k', 1)], [row('m', 2)], [row('k', 5)]]);
    runs[2].finish();
    expect(await again).to.equal(50);
  });

  it('runs a failed batch again one row at a time: only the row that fails gets the error', async () => {
    const { runs, run } = heldStatement((r) => r.key === 'bad');
    const batch = new StatementBatch(run, (r: Row) => r.key, { maxInFlight: 1, maxRows: 100, busy });
    const lone = batch.submit(row('first', 0));
    const results = [row('a', 1), row('bad', 2), row('c', 3)].map((r) =>
      batch.submit(r).then(
        (n) => n,
        (err: Error) => err.message,
      ),
    );
    runs[0].finish();
    await lone;
    await tick();
    runs[1].finish(); // a, bad, c together: fails
    await tick();
    expect(runs.slice(2).map((r) => r.rows)).to.deep.equal([[row('a', 1)], [row('bad', 2)], [row('c', 3)]]);
    runs.slice(2).forEach((r) => r.finish());
    expect(await Promise.all(results)).to.deep.equal([10, 'bad row', 30]);
  });
});
