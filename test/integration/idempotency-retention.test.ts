// The rows of idempotency keys past their 24 h are deleted by the hourly purge (the event purge's schedule runs it,
// decision 0167), in batches; a row within its 24 h is never touched: a stored answer is still replayed, and a STARTED
// row still names its key's rows (decision 0168).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack, type TestCustomer } from '../helpers/stack';

describe('idempotency keys past their 24 h', () => {
  let c: TestCustomer;
  before(async () => {
    c = await newCustomer('Key Retention Ltda');
  });

  const sql = async <T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> =>
    (await systemEm((await stack()).services.orm).execute(query, params)) as T[];

  /** `count` rows of the customer's keys as requests leave them, expiring `expiresIn` from now (an interval). */
  const keyRows = async (count: number, state: 'DONE' | 'STARTED', expiresIn: string): Promise<string[]> => {
    const rows = await sql<{ key: string }>(
      `insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at,
        expires_at)
       select ?, gen_random_uuid(), 'h', ?, ?, ?::jsonb, now() - interval '24 hours' + ?::interval, now() + ?::interval
       from generate_series(1, ?)
       returning key`,
      [c.customerId, state, state === 'DONE' ? 201 : null, state === 'DONE' ? '{}' : null, expiresIn, expiresIn, count],
    );
    return rows.map((r) => r.key);
  };
  const keysLeft = async (keys: string[]) =>
    (
      await sql<{ key: string }>(
        "select key from idempotency_keys where customer_id = ? and key::text = any(string_to_array(?, ','))",
        [c.customerId, keys.join(',')],
      )
    )
      .map((r) => r.key)
      .sort();

  /** One run of the hourly purge, as its schedule starts it. */
  async function purgeRun(): Promise<unknown> {
    const { services, config } = await stack();
    return services.temporal.workflow.execute('eventPurgeWorkflow', {
      taskQueue: config.taskQueue,
      workflowId: `event-purge-test-${randomUUID()}`,
      args: [],
    });
  }

  it('deletes expired rows in batches and keeps every row within its 24 h', async () => {
    // More than one batch (1000 rows) of expired answers, and a STARTED row as expired.
    const expired = [...(await keyRows(1001, 'DONE', '-2 hours')), ...(await keyRows(1, 'STARTED', '-3 hours'))];
    const kept = [
      ...(await keyRows(1, 'DONE', '1 hour')),
      // A request that died after its first effect: its retry, within the key's 24 h, must find the same instant.
      ...(await keyRows(1, 'STARTED', '1 minute')),
      // Expired a minute ago: a request transaction that began before may still be looking at it.
      ...(await keyRows(1, 'DONE', '-1 minute')),
    ];
    const run = (await purgeRun()) as { idempotencyKeys: number };
    expect(run.idempotencyKeys).to.be.at.least(expired.length);
    expect(await keysLeft([...expired, ...kept])).to.deep.equal([...kept].sort());
  });

  it('a key used again after the purge is a new request; a live key still replays', async () => {
    const { http } = await stack();
    const account = await activeAccount(c, ['USD', 'BRL']);
    const body = { accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '10.00' };
    const [old, live] = [randomUUID(), randomUUID()];
    const quote = (key: string) => http.post('/api/quotes').set(c.auth).set('X-Idempotency-Key', key).send(body);
    const first = await quote(old);
    const kept = await quote(live);
    expect([first.status, kept.status]).to.deep.equal([201, 201]);
    await sql(`update idempotency_keys set expires_at = now() - interval '2 hours' where customer_id = ? and key = ?`, [
      c.customerId,
      old,
    ]);

    await purgeRun();
    expect(await keysLeft([old, live])).to.deep.equal([live]);
    const replay = await quote(live);
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body.id]).to.deep.equal([
      201,
      'true',
      kept.body.id,
    ]);
    const anew = await quote(old);
    expect([anew.status, anew.headers['idempotent-replayed']]).to.deep.equal([201, undefined]);
    expect(anew.body.id).to.not.equal(first.body.id);
  });
});
