// A statements run reports progress while it writes a long statement, not only between accounts: the schedule's
// activity heartbeats with it (2-minute heartbeat timeout), and an attempt silent for longer is timed out by Temporal
// and tried again while the first goes on writing the same statement (decision 0213).
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { issueStatements } from '../../statements/issue';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';

// Enough postings for a JSON body of several 1 MiB pieces (an entry is about 300 characters).
const POSTINGS = 12_000;

// Yesterday's postings of one account, one a second, each with the balance after it (as bench/statements.ts seeds).
const SEED_SQL = `
with p as (
  select g, gen_random_uuid() as tx, 2.00 as amount,
    date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '20 hours' + g * interval '1 second' as at
  from generate_series(1, ?::int) g
), t as (
  insert into ledger_transactions (id, key, operation_id, description, created_at)
  select tx, 'progress:' || tx, null, 'seeded posting', at from p
)
insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at, balance_seq, booked_at,
  available_after, held_after)
select gen_random_uuid(), tx, ?::uuid, 'available', 'BRL', amount, at, g, at,
  sum(amount) over (order by g rows between unbounded preceding and current row), 0
from p`;

describe('Issuing a long statement', function () {
  this.timeout(300000);

  it('reports progress at least once per stored piece of its body', async () => {
    const { services, config } = await stack();
    const c = await newCustomer('Conta Movimentada Ltda');
    const account = (await activeAccount(c, ['BRL'])).id;
    const em = systemEm(services.orm);
    await em.execute(`update accounts set created_at = now() - interval '2 days' where id = ?`, [account]);
    await em.execute(SEED_SQL, [POSTINGS, account]);
    try {
      let progress = 0;
      const issuing = { statementInterval: 'day', webhookTaskQueue: config.webhookTaskQueue };
      const result = await issueStatements({ orm: services.orm, config: issuing }, new Date(), () => progress++);
      expect(result.issued).to.be.at.least(1);

      const [{ pieces }] = (await em.execute(
        `select count(*)::int as pieces from statements s join statement_chunks c on c.body_id = s.body_id
         where s.account_id = ?`,
        [account],
      )) as Array<{ pieces: number }>;
      expect(pieces, 'a body of several pieces').to.be.at.least(3);
      expect(progress, 'progress reports while the statement was written').to.be.at.least(pieces);
    } finally {
      // The seeded postings have no other side: gone, the ledger balances again (the suite checks it after each test).
      await em.execute(
        `delete from ledger_entries
         where transaction_id in (select id from ledger_transactions where key like 'progress:%')`,
      );
      await em.execute(`delete from ledger_transactions where key like 'progress:%'`);
    }
  });
});
