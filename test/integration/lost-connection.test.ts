// A connection to Postgres lost under a keyed transaction, at each of its messages: the failure is a dependency
// failure (503 with Retry-After, never a 500), and nothing is stored under the key, so the client's retry with the
// same key runs the request again. The cut is real: Postgres terminates the backend (pg_terminate_backend) just
// before the chosen message is sent on it, as a restart or a failover does.
import { expect } from 'chai';
import type { Client } from 'pg';
import { dependencyFailure } from '../../services/errors';
import { inKeyedTransaction, KeyedOptions } from '../../db/keyed-transaction';
import { openOrm, systemEm, tenantEm } from '../../db/orm';
import type { Orm } from '../../db/orm';
import { newCustomer } from '../helpers/stack';

interface PgDialectClient {
  config: unknown;
  _query(connection: Client, obj: { sql: string }): Promise<unknown>;
}

/**
 * Arms a cut of the connection of `orm` that is about to send a message matching `target`, once. Knex sends a
 * transaction's messages through a client made from the dialect's prototype, so the prototype is where they pass;
 * `config` tells this ORM's clients from those of the rest of the process.
 */
function cutBefore(orm: Orm, target: RegExp): { cut: () => boolean; disarm: () => void } {
  const ours = orm.em.getConnection().getKnex().client as unknown as PgDialectClient;
  const dialect = Object.getPrototypeOf(ours) as PgDialectClient;
  const send = dialect._query;
  let done = false;
  dialect._query = async function (this: PgDialectClient, connection, obj) {
    if (!done && this.config === ours.config && target.test(obj.sql)) {
      done = true;
      const pid = (connection as unknown as { processID: number }).processID;
      const ended = new Promise((resolve) => connection.once('end', resolve));
      await systemEm(orm).execute('select pg_terminate_backend(?)', [pid]);
      await ended;
    }
    return send.call(this, connection, obj);
  };
  return { cut: () => done, disarm: () => void (dialect._query = send) };
}

describe('a connection lost under a keyed transaction', () => {
  let orm: Orm;
  before(async () => {
    orm = await openOrm(process.env.DATABASE_URL as string, { poolMax: 4 });
  });
  after(async () => {
    await orm?.close(true);
  });

  const opts: KeyedOptions<number> = {
    answerOf: (n) => ({ status: 201, body: { n } }),
    storedError: () => undefined,
  };

  // BEGIN: knex marks the transaction complete yet hands it over, so the first statement fails with "Transaction
  // query already complete" and the connection error is only in the transaction's own promise.
  const messages: Array<[string, RegExp]> = [
    ['BEGIN', /^BEGIN/i],
    ['the opening batch (take the key, SAVEPOINT)', /savepoint keyed_handler/i],
    ["the handler's statement", /select 7 as n/],
    ['the closing batch (RELEASE, store the answer)', /release savepoint keyed_handler/i],
  ];
  messages.forEach(([message, target], i) => {
    it(`before ${message}: a 503 with Retry-After, nothing stored under the key`, async () => {
      const c = await newCustomer();
      const em = () => tenantEm(orm, c.customerId);
      const key = `00000000-0000-4000-8000-${String(900 + i).padStart(12, '0')}`;
      const handler = async (tx: typeof orm.em) => {
        const rows = (await tx.execute('select 7 as n')) as Array<{ n: number }>;
        return rows[0].n;
      };
      const fault = cutBefore(orm, target);
      const err = await inKeyedTransaction(em(), { key, requestHash: 'h' }, handler, opts).then(
        (outcome) => outcome,
        (e: unknown) => e,
      );
      fault.disarm();
      expect(fault.cut(), 'the connection was cut').to.equal(true);
      const failure = dependencyFailure(err);
      expect(failure?.code, `classified as a dependency failure: ${String((err as Error)?.message)}`).to.equal(
        'SERVICE_UNAVAILABLE',
      );
      expect(failure?.details.retryAfterSeconds).to.be.a('number');
      const retry = await inKeyedTransaction(em(), { key, requestHash: 'h' }, handler, opts);
      expect(retry, 'the retry with the key runs the request').to.deep.equal({ kind: 'done', result: 7 });
    });
  });
});
