import { expect } from 'chai';
import Koa from 'koa';
import pino from 'pino';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { requestContext } from '../../api/middleware/request-context';
import { newCustomer, stack } from '../helpers/stack';

describe('platform', () => {
  it('serves liveness and readiness with both dependencies checked', async () => {
    const { http } = await stack();
    const live = await http.get('/healthz');
    expect(live.status).to.equal(200);
    expect(live.headers['x-service-version']).to.equal('1');
    const ready = await http.get('/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.deep.equal({ postgres: 'ok', temporal: 'ok' });
  });

  it('publishes an OpenAPI 3.1 document built from the same schemas Ajv enforces', async () => {
    const { http } = await stack();
    const res = await http.get('/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal('3.1.0');
    const quote = res.body.paths['/api/quotes'].post;
    expect(quote.requestBody.content['application/json'].schema.required).to.include.members([
      'accountId',
      'sourceAsset',
      'targetAsset',
    ]);
    expect(res.body.paths['/api/operations/{operationId}'].get.parameters[0]).to.include({
      name: 'operationId',
      in: 'path',
    });
    expect(res.body.paths['/api/oauth/client/token'].post.security).to.deep.equal([]);
  });

  it("names where tokens come from: this server's token endpoint, or AUTH_URL's", async () => {
    const { http, config } = await stack();
    const description = async () =>
      (await http.get('/openapi.json')).body.components.securitySchemes.bearer.description as string;
    expect(await description()).to.match(
      /^An access token from POST http:\/\/127\.0\.0\.1:\d+\/api\/oauth\/client\/token /,
    );
    const before = config.authUrl;
    config.authUrl = 'https://auth.example.com';
    try {
      expect(await description()).to.contain('POST https://auth.example.com/api/oauth/client/token with');
    } finally {
      config.authUrl = before;
    }
  });

  it('answers an unknown route with 404 NOT_FOUND, a request id and the served version', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const res = await http.get('/api/nothing-here').set(c.auth).set('X-Service-Version', '7');
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
    expect(res.headers['x-request-id']).to.be.a('string');
    expect(res.headers['x-service-version']).to.equal('1');
  });

  it('keeps a caller-supplied X-Request-Id', async () => {
    const { http } = await stack();
    const res = await http.get('/healthz').set('X-Request-Id', 'trace-abc-12345');
    expect(res.headers['x-request-id']).to.equal('trace-abc-12345');
  });

  it('rate-limits a customer with 429 RATE_LIMITED and Retry-After, without touching other customers', async () => {
    const { services } = await stack();
    const app = createApp({ ...services, config: { ...services.config, rateLimitPerSecond: 1, rateLimitBurst: 3 } });
    const http = supertest(app.callback());
    const noisy = await newCustomer();
    const quiet = await newCustomer();
    const statuses: number[] = [];
    let limited: supertest.Response | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await http.get('/api/accounts').set(noisy.auth);
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 3)).to.deep.equal([200, 200, 200]);
    expect(statuses.slice(3)).to.deep.equal([429, 429]);
    expect(limited!.body.code).to.equal('RATE_LIMITED');
    expect(Number(limited!.headers['retry-after'])).to.be.at.least(1);
    expect((await http.get('/api/accounts').set(quiet.auth)).status).to.equal(200);
  });

  it('turns an unexpected failure into 500 INTERNAL_ERROR with the request id and no stack', async () => {
    const app = new Koa();
    app.use(requestContext(pino({ level: 'silent' })));
    app.use(() => {
      throw new Error('database password is hunter2');
    });
    const res = await supertest(app.callback()).get('/boom');
    expect(res.status).to.equal(500);
    expect(res.body.code).to.equal('INTERNAL_ERROR');
    expect(res.body.details.requestId).to.equal(res.headers['x-request-id']);
    expect(JSON.stringify(res.body)).not.to.contain('hunter2');
    expect(JSON.stringify(res.body)).not.to.contain('at ');
  });
});
