// A transaction's BEGIN travels with its first statement instead of alone: one round trip less per transaction.

/** What knex calls on a pooled pg connection (`_query` in its pg dialect: a config object and a callback). */
export interface CallbackClient {
  query(config: unknown, callback?: (err: Error | null, result?: unknown) => void): unknown;
}

interface QueryConfig {
  text?: unknown;
  name?: unknown;
  values?: unknown[];
}

// Exactly what knex sends to open a transaction at the default isolation level (its pg dialect's `begin`).
const KNEX_BEGIN = 'BEGIN;';

// What pg answers for a lone BEGIN, enough for knex (it reads nothing from it).
const BEGIN_RESULT = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };

/**
 * Wraps a pooled connection so that knex's `BEGIN;` is not sent on its own: it is answered at once and sent in
 * front of the transaction's next statement, in the same simple-query message, which Postgres runs in order (the
 * BEGIN first, so the statement runs inside the transaction, exactly as before). The caller gets that
 * statement's own result, as if it had been sent alone. A next statement that needs the extended protocol (pg
 * parameters or a prepared name) cannot share a message: the BEGIN is then sent first, on its own, as before.
 *
 * Nothing changes for anything else: a BEGIN with options, a query without a callback (db/raw.ts, outside
 * transactions), a statement outside a transaction. A BEGIN that cannot fail in practice only fails with the
 * statement it travels with, whose error the caller sees; knex then rolls back as it would have.
 */
export function deferBegin(client: CallbackClient): void {
  const send = client.query.bind(client);
  let beginPending = false;
  client.query = (config: unknown, callback?: (err: Error | null, result?: unknown) => void) => {
    if (!callback) return send(config);
    const q = config as QueryConfig;
    if (q?.text === KNEX_BEGIN && !q.name && !q.values?.length) {
      beginPending = true;
      process.nextTick(callback, null, BEGIN_RESULT);
      return undefined;
    }
    if (!beginPending) return send(config, callback);
    beginPending = false;
    if (typeof q?.text !== 'string' || q.name || q.values?.length) {
      send({ text: KNEX_BEGIN }, () => undefined); // pg sends queued queries in order: the BEGIN goes first
      return send(config, callback);
    }
    return send({ ...q, text: `${KNEX_BEGIN}\n${q.text}` }, (err, result) => {
      if (err) return callback(err);
      // Postgres answered BEGIN and then the statement(s): hand back what the statement(s) alone would give.
      const results = result as unknown[];
      callback(null, results.length === 2 ? results[1] : results.slice(1));
    });
  };
}
