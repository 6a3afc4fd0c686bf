// Sandbox mode only when asked: off is the default of every process, and off means the sandbox routes do not exist.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { loadConfig } from '../../config';
import { createApp } from '../../api/app';
import { idem, newCustomer, stack } from '../helpers/stack';

const SANDBOX_ROUTES = [
  '/api/sandbox/accounts/{accountId}/review',
  '/api/sandbox/payment-instructions/{instructionId}/review',
  '/api/sandbox/operations/{operationId}/inbound-payment',
  '/api/sandbox/operations/{operationId}/hold-review',
];

describe('sandbox mode', () => {
  it('is off unless SANDBOX asks for it, whatever NODE_ENV says', () => {
    expect(loadConfig({}).sandbox).to.equal(false);
    expect(loadConfig({ NODE_ENV: 'development' }).sandbox).to.equal(false);
    expect(loadConfig({ SANDBOX: '' }).sandbox).to.equal(false);
    expect(loadConfig({ SANDBOX: 'false' }).sandbox).to.equal(false);
    expect(loadConfig({ SANDBOX: 'true' }).sandbox).to.equal(true);
    expect(loadConfig({ SANDBOX: 'true', NODE_ENV: 'production' }).sandbox).to.equal(true);
  });

  it('off: every sandbox route is an unknown path (404 NOT_FOUND), undocumented, and /readyz says so', async () => {
    const { services } = await stack();
    const c = await newCustomer();
    const off = supertest(createApp({ ...services, config: { ...services.config, sandbox: false } }).callback());
    for (const route of SANDBOX_ROUTES) {
      const path = route.replace(/\{[A-Za-z]+\}/, randomUUID());
      const res = await off.post(path).set(c.auth).set(idem()).send({ decision: 'APPROVE' });
      expect([res.status, res.body.code, res.body.message], path).to.deep.equal([
        404,
        'NOT_FOUND',
        `no route for POST ${path}`,
      ]);
    }
    const doc = (await off.get('/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.includes('sandbox'))).to.deep.equal([]);
    expect((await off.get('/readyz')).body).to.include({ status: 'ready', sandbox: false });
  });

  it('on: the routes exist, are documented, and /readyz says so', async () => {
    const { http } = await stack();
    const doc = (await http.get('/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.includes('sandbox'))).to.have.members(SANDBOX_ROUTES);
    expect((await http.get('/readyz')).body).to.include({ status: 'ready', sandbox: true });
  });
});
