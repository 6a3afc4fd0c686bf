// A streamed response (a statement) keeps its customer's in-flight slot until it has been written (decision 0246):
// one customer that asks for many long statements and reads none of them is held to its own in-flight bound, and the
// API process, with its production heap (128 MB), keeps serving everyone else.
import net from 'node:net';
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { killAll, spawnApi } from '../helpers/processes';

// A statement of some 9 MB of JSON: more than the kernel's socket buffers take from a reader that reads nothing.
const POSTINGS = 30_000;
// Well past the in-flight bound (8) and its queue's worth of memory: before decision 0246 this many ended the process.
const UNREAD_STATEMENTS = 48;

// Yesterday's postings of one account, one a second, each with the balance after it (as bench/statements.ts seeds).
const SEED_SQL = `
with p as (
  select g, gen_random_uuid() as tx, 2.00 as amount,
    date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '20 hours' + g * interval '1 second' as at
  from generate_series(1, ?::int) g
), t as (
  insert into ledger_transactions (id, key, operation_id, description, created_at)
  select tx, 'unread:' || tx, null, 'seeded posting', at from p
)
insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at, balance_seq, booked_at,
  available_after, held_after)
select gen_random_uuid(), tx, ?::uuid, 'available', 'BRL', amount, at, g, at,
  sum(amount) over (order by g rows between unbounded preceding and current row), 0
from p`;

/** A GET whose response is never read past its first bytes: the reader pauses the socket and leaves it open. */
function unreadGet(port: number, path: string, c: TestCustomer): { socket: net.Socket; head: Promise<string> } {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const head = new Promise<string>((resolve) => {
    socket.once('data', (d) => {
      socket.pause();
      resolve(d.toString('latin1').split('\r\n\r\n')[0]);
    });
    socket.once('close', () => resolve(''));
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${c.auth.Authorization}\r\n\r\n`);
  return { socket, head };
}

describe('Streamed responses and the customer in-flight bound', function () {
  this.timeout(180_000);
  after(killAll);

  it('holds a customer that reads none of its statements to its own slots; the API keeps serving others', async () => {
    const { services } = await stack();
    const a = await newCustomer('Leitor Lento Ltda');
    const b = await newCustomer('Vizinho Ltda');
    const account = (await activeAccount(a, ['BRL'])).id;
    const em = systemEm(services.orm);
    await em.execute(`update accounts set created_at = now() - interval '2 days' where id = ?`, [account]);
    await em.execute(SEED_SQL, [POSTINGS, account]);
    const sockets: net.Socket[] = [];
    try {
      // The production flags (128 MB of old space) and the default limits: 8 in flight, 64 waiting up to 10 s.
      const api = await spawnApi('api-unread', 'unread-statements');
      const since = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
      const until = new Date(Date.now() + 1000).toISOString().slice(0, 19);
      const path =
        `/api/accounts/${account}/statement?asset=BRL&periodStart=${since}T00:00:00Z` +
        `&periodEnd=${until}Z&format=json`;
      const timeB = async () => {
        const started = Date.now();
        const res = await fetch(`${api.url}/api/accounts`, { headers: b.auth }).catch(() => undefined);
        await res?.arrayBuffer();
        return { status: res?.status ?? 0, ms: Date.now() - started };
      };
      const alone: number[] = [];
      for (let i = 0; i < 5; i++) alone.push((await timeB()).ms);

      const port = Number(new URL(api.url).port);
      const unread = Array.from({ length: UNREAD_STATEMENTS }, () => unreadGet(port, path, a));
      sockets.push(...unread.map((u) => u.socket));
      // B keeps asking while A's statements sit unread and its queued requests wait out their 10 s.
      const during: Array<{ status: number; ms: number }> = [];
      const until12s = Date.now() + 12_000;
      while (Date.now() < until12s) {
        during.push(await timeB());
        await new Promise((r) => setTimeout(r, 250));
      }
      const heads = await Promise.all(unread.map((u) => u.head));

      expect(api.alive(), `the API process is still running: ${api.output().slice(-2000)}`).to.equal(true);
      expect(during.map((r) => r.status)).to.deep.equal(during.map(() => 200));
      // Generous for a loaded 2-core machine: B's median within 10 times its own, or half a second.
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      expect(median(during.map((r) => r.ms))).to.be.below(Math.max(10 * median(alone), 500));
      // A is slowed by its own unread statements: those past its slots and its queue's wait are 429 with Retry-After.
      const limited = heads.filter((h) => /^HTTP\/1\.1 429/.test(h));
      expect(limited.length, 'requests of A refused 429').to.be.greaterThan(0);
      for (const h of limited) expect(h).to.match(/\r\nRetry-After: \d+/i);
    } finally {
      for (const s of sockets) s.destroy();
      // The seeded postings have no other side: gone, the ledger balances again (the suite checks it after each test).
      await em.execute(
        `delete from ledger_entries
         where transaction_id in (select id from ledger_transactions where key like 'unread:%')`,
      );
      await em.execute(`delete from ledger_transactions where key like 'unread:%'`);
    }
  });

  it('bounds the statements several customers leave unread together; the API keeps serving the others', async () => {
    const { services } = await stack();
    const em = systemEm(services.orm);
    const readers: Array<{ c: TestCustomer; account: string }> = [];
    for (let i = 0; i < READERS; i++) {
      const c = await newCustomer(`Leitor ${i} Ltda`);
      const account = (await activeAccount(c, ['BRL'])).id;
      await em.execute(`update accounts set created_at = now() - interval '2 days' where id = ?`, [account]);
      await em.execute(SEED_SQL, [POSTINGS, account]);
      readers.push({ c, account });
    }
    const b = await newCustomer('Vizinho Ltda');
    const sockets: net.Socket[] = [];
    try {
      const api = await spawnApi('api-unread-many', 'unread-statements-many');
      const port = Number(new URL(api.url).port);
      const timeB = async () => {
        const started = Date.now();
        const res = await fetch(`${api.url}/api/accounts`, { headers: b.auth }).catch(() => undefined);
        await res?.arrayBuffer();
        return { status: res?.status ?? 0, ms: Date.now() - started };
      };
      const alone: number[] = [];
      for (let i = 0; i < 5; i++) alone.push((await timeB()).ms);
      // Each reader keeps its whole in-flight share (8) on statements it never reads: forty of them at once.
      const unread = readers.flatMap(({ c, account }) =>
        Array.from({ length: 8 }, () => unreadGet(port, statementPath(account), c)),
      );
      sockets.push(...unread.map((u) => u.socket));
      const during: Array<{ status: number; ms: number }> = [];
      const until12s = Date.now() + 12_000;
      while (Date.now() < until12s) {
        during.push(await timeB());
        await new Promise((r) => setTimeout(r, 250));
      }
      const heads = await Promise.all(unread.map((u) => u.head));

      expect(api.alive(), `the API process is still running: ${api.output().slice(-2000)}`).to.equal(true);
      expect(during.map((r) => r.status)).to.deep.equal(during.map(() => 200));
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      expect(median(during.map((r) => r.ms))).to.be.below(Math.max(10 * median(alone), 500));
      // Past the process's statements (16) and each reader's share (4), the rest waited their 10 s and were refused.
      const started = heads.filter((h) => /^HTTP\/1\.1 200/.test(h));
      expect(started.length, 'statements written at once').to.be.at.most(16);
      const refused = heads.filter((h) => /^HTTP\/1\.1 (429|503)/.test(h));
      expect(refused.length, 'statements refused').to.be.greaterThan(0);
      for (const h of refused) expect(h).to.match(/\r\nRetry-After: \d+/i);
    } finally {
      for (const s of sockets) s.destroy();
      await em.execute(
        `delete from ledger_entries
         where transaction_id in (select id from ledger_transactions where key like 'unread:%')`,
      );
      await em.execute(`delete from ledger_transactions where key like 'unread:%'`);
    }
  });
});

// Customers that each leave a whole in-flight share of statements unread in the second test: before decision 0251,
// five of them (forty statements) ran the API out of heap.
const READERS = 5;

function statementPath(account: string): string {
  const since = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  const until = new Date(Date.now() + 1000).toISOString().slice(0, 19);
  return (
    `/api/accounts/${account}/statement?asset=BRL&periodStart=${since}T00:00:00Z` + `&periodEnd=${until}Z&format=json`
  );
}
