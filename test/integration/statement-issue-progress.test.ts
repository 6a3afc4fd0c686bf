// A statements run reports progress while it writes a long statement, not only between accounts: the schedule's
// activity heartbeats with it (2-minute heartbeat timeout), and an attempt silent for longer is timed out by Temporal
// and tried again while the first goes on writing the same statement (decision 0213).
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { issueStatements } from '../../statements/issue';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';
import { removeSeededPostings, seedPostings } from '../helpers/statements';

// Enough postings for a JSON body of several 1 MiB pieces (an entry is about 300 characters).
const POSTINGS = 12_000;

describe('Issuing a long statement', function () {
  this.timeout(300000);

  it('reports progress at least once per stored piece of its body', async () => {
    const { services, config } = await stack();
    const c = await newCustomer('Conta Movimentada Ltda');
    const account = (await activeAccount(c, ['BRL'])).id;
    const em = systemEm(services.orm);
    await seedPostings(em, account, POSTINGS, 'progress');
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
      await removeSeededPostings(em, 'progress');
    }
  });
});
