import { expect } from 'chai';
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PixClient } from '../../rails/pix/client';
import { readPixConfig } from '../../rails/pix/config';

// The BCB's API Pix (openapi.yaml) serves its resources under `https://pix.example.com/api/` and its OAuth2 token at
// `https://pix.example.com/oauth/token`: a PSP laid out so, PIX_PSP_URL being its `/api` base, must give Cambio a token.

interface Seen {
  method: string;
  url: string;
  body: string;
}

async function specPsp(seen: Seen[], underApi = 404) {
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body });
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/oauth/token') {
        return res.end(JSON.stringify({ access_token: 'tok', token_type: 'Bearer', expires_in: 3600 }));
      }
      if (req.url?.startsWith('/api/pix/') && req.headers.authorization === 'Bearer tok') {
        return res.end(JSON.stringify({ endToEndId: req.url.split('/').pop() }));
      }
      if (req.url === '/api/oauth/token') res.statusCode = underApi;
      else res.statusCode = req.url?.startsWith('/api/') ? 401 : 404;
      res.setHeader('content-type', 'application/problem+json');
      res.end(JSON.stringify({ type: 'https://pix.bcb.gov.br/api/v2/error/NaoEncontrado', title: 'Não Encontrado' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('PIX client: the OAuth2 token where the BCB spec puts it', () => {
  // 404: no token under the API's base (the spec layout). 401, 403, 405: a gateway in front of the API guards
  // everything under /api, the token asked there included.
  for (const status of [404, 401, 403, 405]) {
    it(`a PSP whose API base answers ${status} to a token request gives its token at the origin`, async () => {
      const seen: Seen[] = [];
      const { server, origin } = await specPsp(seen, status);
      const client = new PixClient({ baseUrl: `${origin}/api`, clientId: 'c', clientSecret: 's', timeoutMs: 5000 });
      try {
        expect((await client.request('GET', '/pix/E12345678202612050000abcdefghijk')).status).to.equal(200);
        expect(client.tokensFetched).to.equal(1);
        // A second call reuses the token found at the spec's place.
        await client.request('GET', '/pix/E12345678202612050000abcdefghijk');
        expect(seen.filter((s) => s.method === 'POST').map((s) => s.url)).to.deep.equal([
          '/api/oauth/token',
          '/oauth/token',
        ]);
      } finally {
        await client.close();
        server.close();
      }
    });
  }

  it('PIX_TOKEN_URL names the token endpoint, and PIX_SCOPE the scopes asked for', async () => {
    const seen: Seen[] = [];
    const { server, origin } = await specPsp(seen);
    const config = readPixConfig({ PIX_TOKEN_URL: `${origin}/oauth/token`, PIX_SCOPE: 'cob.write pix.read' });
    const client = new PixClient({
      baseUrl: `${origin}/api`,
      clientId: 'c',
      clientSecret: 's',
      timeoutMs: 5000,
      tokenUrl: config.tokenUrl,
      scope: config.scope,
    });
    try {
      expect((await client.request('GET', '/pix/E12345678202612050000abcdefghijk')).status).to.equal(200);
      const posts = seen.filter((s) => s.method === 'POST');
      expect(posts.map((s) => s.url)).to.deep.equal(['/oauth/token']);
      expect(new URLSearchParams(posts[0].body).get('scope')).to.equal('cob.write pix.read');
    } finally {
      await client.close();
      server.close();
    }
  });
});
