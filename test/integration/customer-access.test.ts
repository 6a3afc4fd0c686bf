// A token is only as good as its customer: tokens need `exp`, a disabled or nonexistent customer's tokens stop
// working, the token endpoint refuses a disabled customer, and Postgres ties every tenant row to a customer.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { rotateClientSecret } from '../../services/auth';
import { setCustomerDisabled } from '../../services/customers';
import { eventually, newCustomer, stack } from '../helpers/stack';
import { cambio, cambioFails } from '../helpers/cli';
import { accountBody } from '../helpers/fixtures';
import { listen, rawRequest, statusOf } from '../helpers/raw-http';

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await services.orm.em.fork().execute(query, params)) as T[];
}

describe('customer access', function () {
  this.timeout(60000);

  it('rejects a correctly signed token without exp: 401 UNAUTHORIZED', async () => {
    const { http, services } = await stack();
    const c = await newCustomer();
    const forever = jwt.sign({ client_id: c.clientId }, services.signingKey.privateKey, {
      algorithm: 'RS256',
      keyid: services.signingKey.kid,
      subject: c.customerId,
      issuer: services.config.jwtIssuer,
      audience: services.config.jwtAudience,
    });
    expect(jwt.decode(forever)).not.to.have.property('exp');
    const res = await http.get('/api/accounts').set('Authorization', `Bearer ${forever}`);
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('UNAUTHORIZED');
    // The same customer with an issued token is fine: only the missing exp was refused.
    expect((await http.get('/api/accounts').set(c.auth)).status).to.equal(200);
  });

  it('rejects a valid token of a customer that does not exist: 401 UNAUTHORIZED', async () => {
    const { http, services } = await stack();
    const ghost = jwt.sign({ client_id: 'cli_ghost' }, services.signingKey.privateKey, {
      algorithm: 'RS256',
      keyid: services.signingKey.kid,
      subject: randomUUID(),
      issuer: services.config.jwtIssuer,
      audience: services.config.jwtAudience,
      expiresIn: 60,
    });
    for (const req of [
      http.get('/api/accounts'),
      http.post('/api/quotes').set('X-Idempotency-Key', randomUUID()).send({}),
    ]) {
      const res = await req.set('Authorization', `Bearer ${ghost}`);
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHORIZED');
    }
  });

  it(
    '`cambio customer disable` stops the tokens (within the cache lag) and the token endpoint; enable ' +
      'restores the endpoint, and a token issued before the disable stays refused',
    async () => {
      // An app of its own whose cache keeps a customer's status for 2 s (CUSTOMER_CACHE_SECONDS, 5 s by default):
      // the revocation lag is the cache's, and the shorter one is waited for twice below.
      const { services } = await stack();
      const cacheSeconds = 2;
      const http = supertest(
        createApp({ ...services, config: { ...services.config, customerCacheSeconds: cacheSeconds } }).callback(),
      );
      const c = await newCustomer('To Be Disabled');
      expect((await http.get('/api/accounts').set(c.auth)).status).to.equal(200);

      const disabled = JSON.parse((await cambio('customer', 'disable', c.customerId, '--json')).stdout);
      expect(disabled).to.include({ customerId: c.customerId, name: 'To Be Disabled' });
      expect(Date.parse(disabled.disabledAt)).to.be.closeTo(Date.now(), 60000);

      const token = await http
        .post('/api/oauth/client/token')
        .send({ clientId: c.clientId, clientSecret: c.clientSecret });
      expect(token.status).to.equal(401);
      expect(token.body.code).to.equal('INVALID_CLIENT');

      // Refused once the cached status expires: within the cache's seconds, and 3 s for a busy host.
      const started = Date.now();
      const res = await eventually(
        () => http.get('/api/accounts').set(c.auth),
        (r) => r.status !== 200,
        10000,
        200,
      );
      expect(Date.now() - started).to.be.below(cacheSeconds * 1000 + 3000);
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHORIZED');
      const write = await http.post('/api/quotes').set(c.auth).set('X-Idempotency-Key', randomUUID()).send({});
      expect(write.status).to.equal(401);

      const enabled = JSON.parse((await cambio('customer', 'enable', c.customerId, '--json')).stdout);
      expect(enabled.disabledAt).to.equal(null);
      const fresh = await http
        .post('/api/oauth/client/token')
        .send({ clientId: c.clientId, clientSecret: c.clientSecret });
      expect(fresh.status).to.equal(200);
      const freshAuth = { Authorization: `Bearer ${fresh.body.accessToken}` };
      await eventually(
        () => http.get('/api/accounts').set(freshAuth),
        (r) => r.status === 200,
        10000,
        200,
      );
      // The token of before the disable (perhaps the reason for it) never works again, on this process or another
      // whose cache never saw the disable (decision 0231).
      const stale = await http.get('/api/accounts').set(c.auth);
      expect(stale.status).to.equal(401);
      expect(stale.body.code).to.equal('UNAUTHORIZED');
      const elsewhere = supertest(createApp(services).callback());
      expect((await elsewhere.get('/api/accounts').set(c.auth)).status).to.equal(401);
      expect((await elsewhere.get('/api/accounts').set(freshAuth)).status).to.equal(200);
    },
  );

  // An operator whose customer's secret leaked disables it, rotates the secret and enables it, in either order: the
  // leaked secret must not get a token again during the rotation's grace period (decision 0330).
  it('a secret rotated around a disable gets no token after the enable; the new one does', async () => {
    const { http } = await stack();
    for (const order of [
      ['disable', 'rotate-secret'],
      ['rotate-secret', 'disable'],
    ]) {
      const c = await newCustomer();
      let rotated = '';
      for (const step of order) {
        const out = JSON.parse((await cambio('customer', step, c.customerId, '--json')).stdout);
        if (step === 'rotate-secret') rotated = out.clientSecret;
      }
      await cambio('customer', 'enable', c.customerId, '--json');
      const token = (clientSecret: string) =>
        http.post('/api/oauth/client/token').send({ clientId: c.clientId, clientSecret });
      const leaked = await token(c.clientSecret);
      expect([leaked.status, leaked.body.code], order.join(', then ')).to.deep.equal([401, 'INVALID_CLIENT']);
      expect((await token(rotated)).status, order.join(', then ')).to.equal(200);
    }
  });

  // A token asked for while a disable commits, and a disable while a token is being signed: neither order leaves a
  // token that works after the enable (decision 0332).
  describe('a token and a disable at the same moment', () => {
    /** Holds the customer's row as `statement` leaves it until `release` is called. */
    async function holdCustomerRow(statement: string, customerId: string) {
      const { services } = await stack();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const done = services.orm.em.fork().transactional(async (tx) => {
        await tx.execute(statement, [customerId]);
        held();
        await released;
      });
      await holding;
      return { release, done };
    }

    it('a token asked for while a disable commits waits for it and is refused', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const disable = await holdCustomerRow(
        'update customers set disabled_at = now(), tokens_revoked_at = now() where id = ?',
        c.customerId,
      );
      const token = http.post('/api/oauth/client/token').send({ clientId: c.clientId, clientSecret: c.clientSecret });
      const answered = token.then((res) => res);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      disable.release();
      await disable.done;
      const res = await answered;
      expect([res.status, res.body.code]).to.deep.equal([401, 'INVALID_CLIENT']);
    });

    it('a token asked for with a secret rotated away while it waits is refused; the new secret gets one', async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      // The request has read the client and checked the secret, and waits for the customer's row (a disable, a token
      // being signed); meanwhile the operator rotates the leaked secret with no grace (decision 0349).
      const signing = await holdCustomerRow('select id from customers where id = ? for no key update', c.customerId);
      const token = (clientSecret: string) =>
        http.post('/api/oauth/client/token').send({ clientId: c.clientId, clientSecret });
      const answered = token(c.clientSecret).then((res) => res);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const rotated = await rotateClientSecret(services.orm, c.customerId, 0);
      signing.release();
      await signing.done;
      const res = await answered;
      expect([res.status, res.body.code]).to.deep.equal([401, 'INVALID_CLIENT']);
      expect((await token(rotated.clientSecret)).status).to.equal(200);
    });

    it('a disable that waited for a token being signed revokes it', async () => {
      const { services } = await stack();
      const c = await newCustomer();
      const signing = await holdCustomerRow('select id from customers where id = ? for share', c.customerId);
      const disabled = setCustomerDisabled(services.orm, c.customerId, true);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const signedBy = Math.floor(Date.now() / 1000);
      signing.release();
      await signing.done;
      await disabled;
      const [{ revoked }] = await sql<{ revoked: string }>(
        'select tokens_revoked_at as revoked from customers where id = ?',
        [c.customerId],
      );
      // A token's `iat` taken while the row was held is at most `signedBy`, and `iat <= revocation` is revoked.
      expect(Math.floor(new Date(revoked).getTime() / 1000)).to.be.at.least(signedBy);
    });
  });

  it('without a cache the disable takes effect on the next request', async () => {
    const { services } = await stack();
    const http = supertest(
      createApp({ ...services, config: { ...services.config, customerCacheSeconds: 0 } }).callback(),
    );
    const c = await newCustomer();
    expect((await http.get('/api/accounts').set(c.auth)).status).to.equal(200);
    await setCustomerDisabled(services.orm, c.customerId, true);
    expect((await http.get('/api/accounts').set(c.auth)).status).to.equal(401);
  });

  it('refuses a request whose body ends after a disable, on the API that let its headers in before it', async () => {
    // The request's token is checked when its headers arrive (before its body is read, and before it waits for a
    // slot of its customer's); a body that ends after a disable must not act for the disabled customer, however
    // long it took: the disable is in force on every process, and this one checks on every request.
    const { services } = await stack();
    const own = await listen(createApp({ ...services, config: { ...services.config, customerCacheSeconds: 0 } }));
    const elsewhere = supertest(createApp(services).callback());
    try {
      const c = await newCustomer();
      const body = JSON.stringify(accountBody());
      const head =
        'POST /api/accounts HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n' +
        `Authorization: ${c.auth.Authorization}\r\nX-Idempotency-Key: ${randomUUID()}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
      const exchange = rawRequest(own.port, head + body.slice(0, 1), 20000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await cambio('customer', 'disable', c.customerId);
      // In force on another API process at once: a request there is 401.
      expect((await elsewhere.get('/api/accounts').set(c.auth)).status).to.equal(401);
      exchange.socket.write(body.slice(1));
      const { text } = await exchange.closed;
      expect(statusOf(text)).to.equal(401);
      const [{ n }] = await sql<{ n: number }>('select count(*)::int as n from accounts where customer_id = ?', [
        c.customerId,
      ]);
      expect(n).to.equal(0);
    } finally {
      await own.close();
    }
  });

  it('`cambio customer disable` of an unknown customer exits 1 with NOT_FOUND', async () => {
    const failure = await cambioFails('customer', 'disable', randomUUID(), '--json');
    expect(failure.exitCode).to.equal(1);
    expect(failure.body.code).to.equal('NOT_FOUND');
  });

  describe('foreign keys to customers', () => {
    it('exist on every table with a customer_id column', async () => {
      const rows = await sql<{ table_name: string; has_fk: boolean }>(
        `select c.table_name,
                exists (select 1 from information_schema.table_constraints tc
                          join information_schema.key_column_usage k on k.constraint_name = tc.constraint_name and
                            k.table_name = tc.table_name
                          join information_schema.constraint_column_usage u on u.constraint_name = tc.constraint_name
                         where tc.constraint_type = 'FOREIGN KEY' and tc.table_name = c.table_name
                           and k.column_name = 'customer_id' and u.table_name = 'customers' and u.column_name =
                             'id') as has_fk
           from information_schema.columns c
          where c.table_schema = current_schema() and c.column_name = 'customer_id'`,
      );
      expect(rows.length).to.be.at.least(12);
      expect(
        rows.filter((r) => !r.has_fk).map((r) => r.table_name),
        'tenant tables without a foreign key to customers',
      ).to.deep.equal([]);
    });

    it('refuse a row for a customer that does not exist, and the deletion of a customer that owns rows', async () => {
      const c = await newCustomer();
      const orphan = await sql(
        `insert into beneficiaries (id, customer_id, holder, relationship_type, created_at, updated_at)
                                values (?, ?, '{}'::jsonb, 'SUPPLIER', now(), now())`,
        [randomUUID(), randomUUID()],
      ).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(orphan?.message).to.match(/foreign key/);
      const deleted = await sql('delete from customers where id = ?', [c.customerId]).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(deleted?.message).to.match(/foreign key/);
    });
  });
});
