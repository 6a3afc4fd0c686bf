// One API process presents a bounded number of list rows at once, a page counting its `limit`, and one customer's
// share of them (decision 0361): a customer's pages past its share wait, then are 429; past the process's, 503; the
// requests that read no page are not held back. The pages are held here by a lock on the table they read, as a
// migration or a stalled session would hold it, with the lock timeout past the slots' 10 s wait.
import { expect } from 'chai';
import { Client as PgClient } from 'pg';
import { newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { killAll, spawnApi } from '../helpers/processes';

interface Answer {
  status: number;
  code?: string;
  retryAfter: string | null;
  count?: number;
}

describe('list pages, a few rows at a time per process and per customer', function () {
  this.timeout(120_000);
  after(killAll);

  it("holds a customer's pages past its share and every page past the process's; others' reads go on", async () => {
    const { config } = await stack();
    const [a, b, c] = [
      await newCustomer('Lista A Ltda'),
      await newCustomer('Lista B Ltda'),
      await newCustomer('Lista C Ltda'),
    ];
    const api = await spawnApi('api-list-slots', 'list-slots', {
      DB_LOCK_TIMEOUT_MS: '30000',
      LIST_ROWS_MAX: '200',
      LIST_ROWS_PER_CUSTOMER: '100',
    });
    const get = async (who: TestCustomer, path: string): Promise<Answer> => {
      const res = await fetch(`${api.url}${path}`, { headers: who.auth });
      const body = (await res.json()) as { code?: string; data?: unknown[] };
      return {
        status: res.status,
        code: body.code,
        retryAfter: res.headers.get('retry-after'),
        count: body.data?.length,
      };
    };
    let aFirst: Promise<Answer> | undefined;
    let bPage: Promise<Answer> | undefined;
    const locker = new PgClient({ connectionString: config.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table accounts in access exclusive mode');
      // A's first page of 100 takes its whole share and waits on the lock; its second waits for its share.
      aFirst = get(a, '/api/accounts?limit=100');
      await new Promise((r) => setTimeout(r, 300));
      const aSecond = get(a, '/api/accounts?limit=100');
      // B's page takes the process's other 100 rows; C's page, of another list, finds none left.
      bPage = get(b, '/api/accounts?limit=100');
      await new Promise((r) => setTimeout(r, 300));
      const cPage = get(c, '/api/beneficiaries?limit=10');
      // A read that is no page is answered at once, though every row of the process is taken.
      const started = Date.now();
      expect((await get(c, '/api/rates?base=USD')).status).to.equal(200);
      expect(Date.now() - started).to.be.below(5000);

      const refusedA = await aSecond;
      expect(refusedA, 'A past its share').to.include({ status: 429, code: 'RATE_LIMITED', retryAfter: '1' });
      const refusedC = await cPage;
      expect(refusedC, 'C past the process').to.include({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '2' });
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect(await aFirst).to.include({ status: 200, count: 0 });
    expect(await bPage).to.include({ status: 200, count: 0 });
    // The rows are given back: every customer's pages are served again.
    for (const who of [a, b, c]) expect(await get(who, '/api/beneficiaries?limit=100')).to.include({ status: 200 });
  });
});
