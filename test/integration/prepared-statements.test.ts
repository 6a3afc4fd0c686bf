// Hot reads run as prepared statements (db/raw.ts). A migration that adds a column must not break the processes
// still running: their statements name their columns, so Postgres re-plans them instead of failing with "cached
// plan must not change result type", which is what a prepared `select *` does.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';
import { newCustomer, stack } from '../helpers/stack';

describe('prepared hot reads across a migration that adds a column', () => {
  after(async () => {
    const { services } = await stack();
    const em = systemEm(services.orm);
    await em.execute('alter table operations drop column if exists probe_added_later');
    await em.execute('alter table accounts drop column if exists probe_added_later');
  });

  it(
    'keeps answering GET /api/operations/{id} and GET /api/accounts on connections that prepared them ' + 'before',
    async () => {
      const { http, services } = await stack();
      const c = await newCustomer('Migration Probe Ltda');
      const account = await activeAccount(c, ['BRL', 'USD']);
      await fund(c, account.id, 'BRL', '10.00');
      const operationId: string = (await http.get('/api/operations').set(c.auth)).body.data[0].id;
      // Many at once, so that most connections of the pool prepare both statements.
      const readAll = () =>
        Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? http.get(`/api/operations/${operationId}`) : http.get('/api/accounts')).set(c.auth),
          ),
        );
      for (const res of await readAll()) expect(res.status).to.equal(200);
      const em = systemEm(services.orm);
      await em.execute('alter table operations add column probe_added_later int');
      await em.execute('alter table accounts add column probe_added_later int');
      const after = await readAll();
      expect(after.map((r) => r.status)).to.deep.equal(after.map(() => 200));
      expect(after.find((r) => r.body.id === operationId)?.body.id).to.equal(operationId);
    },
  );
});
