// What a client sees on the wire for requests that never reach a route: headers past Node's limit (431),
// requests the HTTP parser refuses (400), unknown paths and methods (404). Raw sockets, because supertest
// cannot send what a well-behaved client library would refuse to build.
import type { Server } from 'node:http';
import { connect, AddressInfo } from 'node:net';
import { expect } from 'chai';
import pino from 'pino';
import { newCustomer, stack } from '../helpers/stack';
import { answerClientErrors } from '../../api/client-error';
import { createHttpServer } from '../../api/overload/http-server';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` as is and reads until the server closes (or 5 s pass). */
function rawRequest(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}

function expectErrorShape(res: RawResponse, status: number, code: string): Record<string, unknown> {
  expect(res.status, res.body).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(res.body);
  expect(body).to.have.keys('code', 'message', 'details');
  expect(body.code).to.equal(code);
  expect(body.message).to.be.a('string').and.not.equal('');
  expect(body.details).to.be.an('object');
  return body;
}

describe('raw HTTP: errors before any route', () => {
  let server: Server;
  let port: number;

  before(async () => {
    const { app, config } = await stack();
    // The API's own server (api/main.ts builds it so), with its timeouts and its Host rule.
    server = createHttpServer(app, config);
    answerClientErrors(server, pino({ level: 'silent' }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a 17 kB query string with 431 HEADERS_TOO_LARGE in the error shape, with a request id', async () => {
    const res = await rawRequest(port, `GET /api/accounts?filters=${'a'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const body = expectErrorShape(res, 431, 'HEADERS_TOO_LARGE');
    expect((body.details as { requestId: string }).requestId).to.equal(res.headers['x-request-id']);
    expect(res.headers['x-service-version'], 'every response names its version').to.equal('1');
    expect(res.headers.connection).to.equal('close');
  });

  it('answers headers past the limit with 431 as well', async () => {
    const res = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ${'b'.repeat(20_000)}\r\n\r\n`);
    expectErrorShape(res, 431, 'HEADERS_TOO_LARGE');
  });

  it('answers a request the HTTP parser refuses with 400 MALFORMED_REQUEST', async () => {
    const res = await rawRequest(port, 'THIS IS NOT HTTP\r\n\r\n');
    expectErrorShape(res, 400, 'MALFORMED_REQUEST');
    expect(res.headers['x-service-version']).to.equal('1');
  });

  it('answers an HTTP/1.1 request without Host 400 MALFORMED_REQUEST in the error shape, not a bare line', async () => {
    const res = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    const body = expectErrorShape(res, 400, 'MALFORMED_REQUEST');
    expect(body.message).to.match(/Host/);
    expect(res.headers['x-service-version']).to.equal('1');
    // HTTP/1.0 has no such rule.
    const old = await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).to.equal(200);
  });

  it('refuses two Authorization headers with 401, whichever comes first', async () => {
    const { token } = await newCustomer();
    for (const [first, second] of [
      [`Bearer ${token}`, 'Bearer x'],
      ['Bearer x', `Bearer ${token}`],
    ]) {
      const res = await rawRequest(
        port,
        `GET /api/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: ${first}\r\nAuthorization: ${second}\r\n` +
          'Connection: close\r\n\r\n',
      );
      const body = expectErrorShape(res, 401, 'UNAUTHORIZED');
      expect(body.message).to.match(/more than one Authorization/);
    }
  });

  it('answers an unknown path with 404 NOT_FOUND, X-Request-Id and X-Service-Version', async () => {
    const { token } = await newCustomer();
    const res = await rawRequest(
      port,
      `GET /api/nothing-here HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    );
    expectErrorShape(res, 404, 'NOT_FOUND');
    expect(res.headers['x-service-version']).to.equal('1');
    const outside = await rawRequest(port, 'GET /nothing-here HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectErrorShape(outside, 404, 'NOT_FOUND');
  });

  it('answers an /api path without a token 401 before routing (decision 0015)', async () => {
    const res = await rawRequest(port, 'GET /api/nothing-here HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectErrorShape(res, 401, 'UNAUTHORIZED');
  });

  it('answers a known path with an unsupported method with 405 METHOD_NOT_ALLOWED and Allow', async () => {
    const { token } = await newCustomer();
    const res = await rawRequest(
      port,
      `DELETE /api/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    );
    expectErrorShape(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).to.equal('POST');
    expect(res.headers['x-service-version']).to.equal('1');
  });

  it('answers CONNECT like any method the API does not serve, instead of dropping the connection', async () => {
    const { token } = await newCustomer();
    const known = await rawRequest(
      port,
      `CONNECT /api/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    expectErrorShape(known, 405, 'METHOD_NOT_ALLOWED');
    expect(known.headers.allow).to.equal('POST');
    expect(known.headers['x-service-version']).to.equal('1');
    expect(known.headers.connection).to.equal('close');
    // Without a token an /api path says who may come in first, as for any other method (decision 0015).
    expectErrorShape(await rawRequest(port, 'CONNECT /api/quotes HTTP/1.1\r\nHost: x\r\n\r\n'), 401, 'UNAUTHORIZED');
    // A proxy's tunnel request names a host, not a path: the error Node gives any other method with such a target.
    const tunnel = await rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectErrorShape(tunnel, 400, 'MALFORMED_REQUEST');
    expect(JSON.parse(tunnel.body).message).to.match(/not a proxy/);
    expectErrorShape(await rawRequest(port, 'CONNECT mailto:x HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'MALFORMED_REQUEST');
  });

  it('keeps serving on the same server after refusing requests', async () => {
    const res = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body)).to.deep.equal({ status: 'ok' });
  });
});
