// URLs that can never receive, asked for with private URLs refused (as in production) and the real resolver
// (c-ares) pointed at a port where no name server answers: whatever is wrong with the URL itself must be a 400
// INVALID_WEBHOOK_URL the client can act on, never a 503 that tells it to try the same URL again later.
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import type { ServiceContext } from '../../services/context';
import { resolverOf } from '../../webhooks/url-policy';
import { closedPortUrl } from '../helpers/receiver';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

describe('webhook URLs that can never receive', function () {
  this.timeout(60000);
  let api: ReturnType<typeof supertest>;
  let c: TestCustomer;
  // A name server that never answers: a lookup that reached it would time out (a dependency down, 503).
  let deadDns: string;

  before(async () => {
    const { services, config } = await stack();
    deadDns = new URL(await closedPortUrl()).host;
    const ctx: ServiceContext = {
      ...services,
      config: { ...config, webhookAllowPrivateUrls: false },
      resolveHost: resolverOf([deadDns]),
    };
    api = supertest(createApp(ctx).callback());
    c = await newCustomer('Url Edges SA');
  });

  const create = (url: string) =>
    api.post('/api/subscriptions').set(c.auth).set(idem()).send({ url, includeAll: true });

  it('refuses port 0 (nothing can listen there) with 400, as it refuses 65536', async () => {
    for (const url of ['https://93.184.216.34:0/h', 'https://93.184.216.34:65536/h']) {
      const res = await create(url);
      expect([res.status, res.body.code], url).to.deep.equal([400, 'INVALID_WEBHOOK_URL']);
      expect(res.body.message, url).to.be.a('string');
    }
    // A public address on an ordinary port is accepted (no lookup is needed for a literal).
    const ok = await create('https://93.184.216.34:8443/h');
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
  });

  it('refuses a host that is no DNS name (a label over 63, an empty label, over 253) with 400, not 503', async () => {
    for (const url of [
      `https://${'a'.repeat(64)}.example.com/h`,
      'https://a..b.example.com/h',
      `https://${'abcdefghij.'.repeat(24)}example.com/h`,
    ]) {
      const res = await create(url);
      expect(res.headers['retry-after'], url).to.equal(undefined);
      expect([res.status, res.body.code], url).to.deep.equal([400, 'INVALID_WEBHOOK_URL']);
      expect(res.body.message, url).to.match(/not a valid host name/);
    }
  });

  it('the same URLs are refused at PATCH, and the subscription keeps its URL', async () => {
    const created = await create('https://93.184.216.34/h');
    expect(created.status).to.equal(201);
    for (const url of ['https://93.184.216.34:0/h', 'https://a..b.example.com/h']) {
      const res = await api.patch(`/api/subscriptions/${created.body.id}`).set(c.auth).set(idem()).send({ url });
      expect([res.status, res.body.code], url).to.deep.equal([400, 'INVALID_WEBHOOK_URL']);
    }
    const read = await api.get(`/api/subscriptions/${created.body.id}`).set(c.auth);
    expect(read.body.url).to.equal('https://93.184.216.34/h');
  });
});
