// Least privilege (decision 0070): the API and the worker run as a member of cambio_app (scripts/test.js gives every
// spawned process that login), which serves the whole path of a request and a workflow, and cannot rewrite history: no
// DDL, no TRUNCATE, no UPDATE or DELETE of the audit log.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Client as PgClient } from 'pg';
import { createAccount, uploadAllDocuments } from '../helpers/fixtures';
import { killAll, spawnApi, spawnWorker } from '../helpers/processes';
import { newCustomer } from '../helpers/stack';
import { cambio } from '../helpers/cli';

const APP_URL = () => {
  const url = process.env.CAMBIO_TEST_APP_DATABASE_URL;
  if (!url) throw new Error('run through `npm test`: it names the application role (CAMBIO_TEST_APP_DATABASE_URL)');
  return url;
};

/** What the application role gets from Postgres for `sql`: 'ok', or the error's code and message. */
async function asApplication(sql: string): Promise<string> {
  const pg = new PgClient({ connectionString: APP_URL() });
  await pg.connect();
  try {
    await pg.query(sql);
    return 'ok';
  } catch (err) {
    const e = err as { code?: string; message: string };
    return `${e.code}: ${e.message}`;
  } finally {
    await pg.end();
  }
}

describe('database roles: the application runs without the owner rights', function () {
  this.timeout(180000);

  after(killAll);

  it('serves requests and workflows as the application role, which cannot rewrite the log or the schema', async () => {
    const taskQueue = `cambio-roles-${randomUUID()}`;
    const [api] = await Promise.all([
      spawnApi('api-as-app-role', taskQueue),
      spawnWorker('worker-as-app-role', taskQueue),
    ]);
    const session = await asApplication(
      `do $$ begin if current_user <> 'cambio_app_test' or not pg_has_role('cambio_app', 'member') then
         raise exception 'not the application role'; end if; end $$`,
    );
    expect(session, 'the spawned processes log in as a member of cambio_app').to.equal('ok');

    // A submission, its outbox start, the review workflow and a decision, all as the application role.
    const c = await newCustomer('Least Privilege Ltda');
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    const post = (path: string, body: unknown) =>
      fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': randomUUID() },
        body: JSON.stringify(body),
      });
    expect((await post(`/api/accounts/${account.id}/review`, {})).status).to.equal(202);
    const decided = await post(`/api/sandbox/accounts/${account.id}/review`, { decision: 'APPROVE' });
    const view = (await decided.json()) as { currentState: { status: string } };
    expect([decided.status, view.currentState.status], JSON.stringify(view)).to.deep.equal([200, 'ACTIVE']);

    // And what it cannot do.
    await cambio('customer', 'create', '--name', 'Audited As Owner Ltda');
    const refusals = {
      disableTrigger: await asApplication('alter table audit_log disable trigger audit_log_append_only'),
      update: await asApplication(`update audit_log set operator = 'mallory'`),
      delete: await asApplication('delete from audit_log'),
      truncate: await asApplication('truncate audit_log'),
      dropTable: await asApplication('drop table operations'),
      createTable: await asApplication('create table scratch (id int)'),
      rewriteDecisions: await asApplication(`update workflow_decisions set decision = 'APPROVE'`),
      moveChainStart: await asApplication('update audit_chain_start set unkeyed_until = 1000000'),
    };
    for (const [what, answer] of Object.entries(refusals)) {
      expect(answer, what).to.match(/^42501: (permission denied|must be owner)/);
    }
    expect(await asApplication('select count(*) from audit_log'), 'it still reads the log').to.equal('ok');
  });
});
