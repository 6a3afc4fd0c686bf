import { expect } from 'chai';
import { CallbackClient, deferBegin } from '../../db/deferred-begin';

type Callback = (err: Error | null, result?: unknown) => void;

/** A stand-in for a pg connection: records what is sent and answers as Postgres would (one result per statement). */
function fakeConnection(fail?: string) {
  const sent: unknown[] = [];
  const client: CallbackClient = {
    query(config: unknown, callback?: Callback) {
      sent.push(config);
      if (!callback) return Promise.resolve({ rows: [] });
      const text = (config as { text: string }).text;
      const statements = text
        .split(';')
        .map((s) => s.trim())
        .filter(Boolean);
      const results = statements.map((s) => ({ command: s.split(' ')[0].toUpperCase(), rows: [{ s }] }));
      setImmediate(() =>
        fail && text.includes(fail)
          ? callback(new Error(`failed: ${fail}`))
          : callback(null, results.length === 1 ? results[0] : results),
      );
      return undefined;
    },
  };
  deferBegin(client);
  const query = (config: unknown) =>
    new Promise<unknown>((resolve, reject) => client.query(config, (err, r) => (err ? reject(err) : resolve(r))));
  return { client, sent, query };
}

describe('deferBegin', () => {
  it("sends knex's BEGIN with the transaction's next statement and answers each as if sent alone", async () => {
    const { sent, query } = fakeConnection();
    const begun = (await query({ text: 'BEGIN;', values: [] })) as { command: string };
    expect(begun.command).to.equal('BEGIN');
    expect(sent, 'nothing sent for the BEGIN yet').to.deep.equal([]);
    const first = (await query({ text: 'select 1', values: [] })) as { rows: unknown[] };
    expect(first.rows).to.deep.equal([{ s: 'select 1' }]);
    expect(sent).to.deep.equal([{ text: 'BEGIN;\nselect 1', values: [] }]);
    // A batch of several statements gets one result per statement, its own.
    await query({ text: 'BEGIN;', values: [] });
    const batch = (await query({ text: 'update a; update b', values: [] })) as Array<{ command: string }>;
    expect(batch.map((r) => r.command)).to.deep.equal(['UPDATE', 'UPDATE']);
    // Statements after the first, and COMMIT, go as they are.
    await query({ text: 'COMMIT;', values: [] });
    expect(sent.slice(1)).to.deep.equal([
      { text: 'BEGIN;\nupdate a; update b', values: [] },
      { text: 'COMMIT;', values: [] },
    ]);
  });

  it('sends the BEGIN first, on its own, when the next statement needs the extended protocol', async () => {
    const { sent, query } = fakeConnection();
    await query({ text: 'BEGIN;', values: [] });
    await query({ text: 'select $1', values: [1] });
    await query({ text: 'BEGIN;', values: [] });
    await query({ name: 'prepared', text: 'select 2', values: [] });
    expect(sent).to.deep.equal([
      { text: 'BEGIN;' },
      { text: 'select $1', values: [1] },
      { text: 'BEGIN;' },
      { name: 'prepared', text: 'select 2', values: [] },
    ]);
  });

  it('hands the error of the first statement to its caller', async () => {
    const { query } = fakeConnection('boom');
    await query({ text: 'BEGIN;', values: [] });
    const err = await query({ text: 'select boom', values: [] }).catch((e: Error) => e);
    expect((err as Error).message).to.equal('failed: boom');
  });

  it('leaves a BEGIN with options, and queries without a callback (prepared hot paths), alone', async () => {
    const { client, sent, query } = fakeConnection();
    await query({ text: 'BEGIN TRANSACTION ISOLATION LEVEL serializable;', values: [] });
    await client.query({ name: 'hot', text: 'select 3', values: [] });
    expect(sent).to.deep.equal([
      { text: 'BEGIN TRANSACTION ISOLATION LEVEL serializable;', values: [] },
      { name: 'hot', text: 'select 3', values: [] },
    ]);
  });
});
