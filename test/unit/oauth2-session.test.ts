// The OAuth2 client-credentials session the PIX, boleto and TED clients share (rails/oauth2-session.ts), against a
// real HTTP server on 127.0.0.1 in the shape of a provider: a token endpoint and one protected resource.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RailUnavailableError } from '../../rails/errors';
import { OAuth2Session, type TokenEndpoint } from '../../rails/oauth2-session';

interface DataRequest {
  line: string;
  authorization?: string;
  contentType?: string;
  correlation?: string | string[];
  body: string;
}

interface TokenRequest {
  authorization?: string;
  contentType?: string;
  body: string;
}

/** Issues t1, t2, … at POST /token; any other request is answered 200 with a token it still takes, else 401. */
class Provider {
  readonly tokenRequests: TokenRequest[] = [];
  readonly dataRequests: DataRequest[] = [];
  /** expires_in of the next tokens (absent: none announced). */
  expiresIn: number | undefined = 300;
  tokenDelayMs = 0;
  /** Answers the token endpoint gives before issuing tokens again. */
  tokenScript: { status: number; headers?: Record<string, string>; body: string }[] = [];
  readonly refused = new Set<string>();
  refuseAll = false;
  /** How long the next requests for data wait for their answers, in order of arrival (then none). */
  dataDelaysMs: number[] = [];
  private issued = 0;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/token') {
        const body = Buffer.concat(chunks).toString('utf8');
        this.tokenRequests.push({
          authorization: req.headers.authorization,
          contentType: req.headers['content-type'],
          body,
        });
        const scripted = this.tokenScript.shift();
        if (scripted) return void res.writeHead(scripted.status, scripted.headers ?? {}).end(scripted.body);
        const token = `t${++this.issued}`;
        const answer = JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: this.expiresIn });
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(answer), this.tokenDelayMs);
        return;
      }
      this.dataRequests.push({
        line: `${req.method} ${req.url}`,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        correlation: req.headers['x-correlation'],
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const token = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
      const taken = !this.refuseAll && !this.refused.has(token) && /^t\d+$/.test(token);
      const answer = () =>
        res.writeHead(taken ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
      setTimeout(answer, this.dataDelaysMs.shift() ?? 0);
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('OAuth2 client-credentials session (rails/oauth2-session.ts)', () => {
  let provider: Provider;
  let session: OAuth2Session;
  const realNow = Date.now;

  const open = (endpoint: Partial<TokenEndpoint> = {}) =>
    new OAuth2Session(
      { clientId: 'cambio', clientSecret: 's3cret', timeoutMs: 2000 },
      { url: `${provider.url}/token`, credentials: 'basic', defaultTtlSeconds: 300, ...endpoint },
      {
        unreachable: (where) => `unreachable: ${where}`,
        answered: (status, where) => `answered ${status} to ${where}`,
        noToken: (status) => `no token (HTTP ${status})`,
        refused: 'credentials refused (TEST_CLIENT_ID)',
      },
    );
  const getData = () => session.request('GET', `${provider.url}/data`);
  const thrown = async (promise: Promise<unknown>): Promise<RailUnavailableError> => {
    const err = await promise.then(
      () => expect.fail('resolved'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(RailUnavailableError);
    return err as RailUnavailableError;
  };

  beforeEach(async () => {
    provider = await new Provider().start();
    session = open();
  });
  afterEach(async () => {
    Date.now = realNow;
    await session.close();
    await provider.stop();
  });

  it('asks for one token with HTTP Basic and uses it until it nears its expiry', async () => {
    expect((await getData()).body).to.deep.equal({ token: 't1' });
    expect((await getData()).body).to.deep.equal({ token: 't1' });
    expect(provider.tokenRequests).to.deep.equal([
      {
        authorization: `Basic ${Buffer.from('cambio:s3cret').toString('base64')}`,
        contentType: 'application/x-www-form-urlencoded',
        body: 'grant_type=client_credentials',
      },
    ]);
    expect(session.tokensFetched).to.equal(1);
  });

  it('sends the id, the secret and the scopes in the form when told to, and no Authorization header', async () => {
    await session.close();
    session = open({ credentials: 'form', scope: 'boleto-cobranca.read boleto-cobranca.write' });
    await session.bearer();
    expect(provider.tokenRequests).to.deep.equal([
      {
        authorization: undefined,
        contentType: 'application/x-www-form-urlencoded',
        body:
          'client_id=cambio&client_secret=s3cret&grant_type=client_credentials' +
          '&scope=boleto-cobranca.read+boleto-cobranca.write',
      },
    ]);
  });

  it('sends the token, the query, a JSON body and the protocol headers made anew for each attempt', async () => {
    let n = 0;
    const headers = () => ({ 'x-correlation': `c${++n}` });
    await getData();
    provider.refused.add('t1');
    const res = await session.request('PUT', `${provider.url}/data/1`, {
      query: { a: 1 },
      body: { v: '1.00' },
      headers,
    });
    expect(res.status).to.equal(200);
    const sent = { line: 'PUT /data/1?a=1', contentType: 'application/json', body: '{"v":"1.00"}' };
    expect(provider.dataRequests.slice(1)).to.deep.equal([
      { ...sent, authorization: 'Bearer t1', correlation: 'c1' },
      { ...sent, authorization: 'Bearer t2', correlation: 'c2' },
    ]);
  });

  it('makes concurrent callers share one token request', async () => {
    provider.tokenDelayMs = 100;
    const tokens = await Promise.all(Array.from({ length: 5 }, () => session.bearer()));
    expect(tokens).to.deep.equal(['t1', 't1', 't1', 't1', 't1']);
    expect(provider.tokenRequests).to.have.length(1);
  });

  it('fetches a new token once on a 401 and sends again with it', async () => {
    await getData();
    provider.refused.add('t1');
    const res = await getData();
    expect(res).to.deep.equal({ status: 200, body: { token: 't2' } });
    expect(provider.tokenRequests).to.have.length(2);
    expect(provider.dataRequests).to.have.length(3);
  });

  it('keeps the new token when a 401 for the token it replaced comes back late', async () => {
    await getData();
    provider.refused.add('t1');
    // Two calls in flight with t1 when the provider stops taking it; the second's 401 comes back once the first has
    // fetched t2 and been answered with it.
    provider.dataDelaysMs = [0, 300];
    const answers = await Promise.all([getData(), getData()]);
    expect(answers.map((a) => a.body)).to.deep.equal([{ token: 't2' }, { token: 't2' }]);
    expect(provider.tokenRequests).to.have.length(2);
  });

  it('takes a second 401 as credentials refused: unavailable for a minute, no third try', async () => {
    provider.refuseAll = true;
    const err = await thrown(getData());
    expect(err.message).to.equal('credentials refused (TEST_CLIENT_ID)');
    expect(err.retryAfterSeconds).to.equal(60);
    expect(provider.tokenRequests).to.have.length(2);
    expect(provider.dataRequests).to.have.length(2);
  });

  it('stops using a token 30 s before the expiry announced, and a short-lived one after half its life', async () => {
    provider.expiresIn = 120;
    const start = realNow();
    const at = (ms: number) => (Date.now = () => start + ms);
    await session.bearer();
    at(89_000);
    expect(await session.bearer()).to.equal('t1');
    at(91_000);
    expect(await session.bearer()).to.equal('t2');

    provider.expiresIn = 40; // 40 s - 30 s of margin is less than half of 40 s: 20 s
    at(200_000);
    expect(await session.bearer()).to.equal('t3');
    at(219_000);
    expect(await session.bearer()).to.equal('t3');
    at(221_000);
    expect(await session.bearer()).to.equal('t4');
  });

  it('takes the default life when the provider announces none', async () => {
    provider.expiresIn = undefined;
    const start = realNow();
    await session.bearer();
    Date.now = () => start + 269_000;
    expect(await session.bearer()).to.equal('t1');
    Date.now = () => start + 271_000;
    expect(await session.bearer()).to.equal('t2');
  });

  it('a token endpoint answering 503 or no token is unavailable (Retry-After kept); the next call asks', async () => {
    provider.tokenScript = [
      { status: 503, headers: { 'retry-after': '7' }, body: 'busy' },
      { status: 200, body: '{"error":"none"}' },
    ];
    const busy = await thrown(session.bearer());
    expect([busy.message, busy.retryAfterSeconds]).to.deep.equal(['answered 503 to POST /token', 7]);
    const empty = await thrown(session.bearer());
    expect([empty.message, empty.retryAfterSeconds]).to.deep.equal(['no token (HTTP 200)', 60]);
    expect(await session.bearer()).to.equal('t1');
    expect(session.tokensFetched).to.equal(1);
  });

  it('a provider that cannot be reached is unavailable', async () => {
    const gone = provider;
    const goneUrl = gone.url;
    provider = await new Provider().start(); // started first so it cannot take the port; stopped by afterEach
    await gone.stop();
    await session.close();
    session = open({ url: `${goneUrl}/token` });
    const err = await thrown(session.bearer());
    expect([err.message, err.retryAfterSeconds]).to.deep.equal(['unreachable: POST /token', 5]);
  });
});
