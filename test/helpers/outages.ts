// A dependency that is down for one spawned process only: a TCP proxy with nothing listening yet, which the test
// opens later (api-starts-during-outages, worker-starts-during-outages).
import { expect } from 'chai';
import supertest from 'supertest';
import { activeAccount } from './fixtures';
import { fund, untilStatus } from './money';
import { portForLater } from './processes';
import { idem, newCustomer, stack } from './stack';
import { TcpProxy } from './tcp-proxy';

/** Temporal behind a closed proxy: the address to give the process, and the proxy to open. */
export async function temporalDown(): Promise<{ proxy: TcpProxy; address: string }> {
  const { config } = await stack();
  const [host, port] = config.temporalAddress.split(':');
  const proxy = new TcpProxy(await portForLater(), { host, port: Number(port) });
  return { proxy, address: `127.0.0.1:${proxy.port}` };
}

/** Postgres behind a closed proxy, as the application role (as every spawned process of the run, scripts/test.js). */
export async function postgresDown(): Promise<{ proxy: TcpProxy; databaseUrl: string }> {
  const { config } = await stack();
  const proxy = new TcpProxy(await portForLater());
  const url = new URL(process.env.CAMBIO_TEST_APP_DATABASE_URL ?? config.databaseUrl);
  url.host = `127.0.0.1:${proxy.port}`;
  return { proxy, databaseUrl: url.toString() };
}

/** A new customer's transfer between two new accounts, posted to `apiUrl` (201), until it is COMPLETED. */
export async function transferSettlesThrough(apiUrl: string, customerName: string): Promise<void> {
  const c = await newCustomer(customerName);
  const [from, to] = [await activeAccount(c, ['BRL']), await activeAccount(c, ['BRL'])];
  await fund(c, from.id, 'BRL', '100.00');
  const body = { sourceAccountId: from.id, targetAccountId: to.id, amount: { value: '40.00', asset: 'BRL' } };
  const transfer = await supertest(apiUrl).post('/api/operations/transfer').set(c.auth).set(idem()).send(body);
  expect(transfer.status, JSON.stringify(transfer.body)).to.equal(201);
  await untilStatus(c, transfer.body.id, 'COMPLETED');
}
