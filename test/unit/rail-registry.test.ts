// rails/registry.ts is the one list of rails (decision 0118): no other source file names a rail, and a rail the
// registry holds is reached by the generic parts (here the notice route) with nothing else to change.
import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import supertest from 'supertest';
import ts from 'typescript';
import { jsonBody } from '../../api/middleware/json-body';
import { requestContext } from '../../api/middleware/request-context';
import { loggablePath } from '../../api/observability/loggable-path';
import { RAILS as API_RAILS } from '../../rails/funding';
import { railNoticeGate, railNoticeRoutes } from '../../api/rail-notices';
import type { ServiceContext } from '../../api/services/context';
import { loadConfig } from '../../config';
import { NoticeRejectedError } from '../../rails/errors';
import type { NoticeVerdict, RailConnector, RailEntry } from '../../rails/rail';
import { RAIL_ENTRIES, RAILS, railsFromConfig } from '../../rails/registry';

const ROOT = path.resolve(__dirname, '../..');
// Tests, docs, benches (clients of the API, naming rails as a customer would) and migrations (history) may name one.
const SKIP = new Set(['node_modules', 'dist', 'test', 'bench', 'scripts', 'migrations', 'docs', 'rails']);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.') || SKIP.has(e.name)) return [];
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every string literal (template literals without substitutions too) of a file that is a rail's name. */
function railLiterals(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && RAILS.includes(node.text)) {
      found.push(`${path.relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the rail registry', () => {
  it('is the only list of rails: no source outside rails/ names one', () => {
    expect(RAILS).to.include.members(['PIX_KEY', 'BOLETO', 'TED', 'CRYPTO']);
    const files = sources(ROOT);
    expect(files.length, 'sources scanned').to.be.greaterThan(100);
    expect(files.flatMap(railLiterals)).to.deep.equal([]);
  });

  it('lists every rail folder, and the API offers exactly its rails', () => {
    const folders = fs
      .readdirSync(path.join(ROOT, 'rails'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(RAIL_ENTRIES.map((e) => e.slug)).to.have.members(folders);
    expect([...API_RAILS]).to.deep.equal([...RAILS]);
    for (const e of RAIL_ENTRIES) {
      expect(e.slug, e.rail).to.match(/^[a-z0-9-]+$/);
      expect(e.assets.length, e.rail).to.be.greaterThan(0);
      expect(e.fundingInstruction('op-1', e.assets[0], new Date()).rail, e.rail).to.equal(e.rail);
    }
  });

  it('redacts the token of any rail from logged paths', () => {
    expect(loggablePath('/rails/pix/s3cret/pix')).to.equal('/rails/pix/<token>/pix');
    expect(loggablePath('/rails/fake/s3cret/notices')).to.equal('/rails/fake/<token>/notices');
  });
});

describe('the generic notice route', () => {
  const TOKEN = 'fake-token';
  const bodies: unknown[] = [];
  let verdict: NoticeVerdict = { confirmed: [], refused: [] };

  // A rail that exists only in this test's registry: notices, nothing else.
  const fakeConnector: RailConnector = {
    rail: 'FAKE',
    notices: {
      checkNoticeToken(token) {
        if (token !== TOKEN) throw new NoticeRejectedError('wrong token', 401);
      },
      async verifyNotice(token, body) {
        this.checkNoticeToken(token);
        bodies.push(body);
        return Promise.resolve(verdict);
      },
      registerNotices: async () => Promise.resolve(),
    },
  };
  const fakeEntry: RailEntry = {
    rail: 'FAKE',
    slug: 'fake',
    assets: ['USDC'],
    transactionType: 'FAKE',
    recordedBy: 'connector',
    notices: { suffix: '/notices', timeoutMs: () => 1000, token: () => 'fake-token' },
    instruction: { summary: 'FAKE', properties: {} },
    fundingInstruction: () => ({ rail: 'FAKE' }),
    hasProvider: () => true,
    connector: () => fakeConnector,
  };

  function app(take: () => number = () => 0) {
    const config = loadConfig({});
    const rails = railsFromConfig(config, [fakeEntry]);
    const s = { config, rails, log: pino({ level: 'silent' }) } as unknown as ServiceContext;
    const router = new Router();
    railNoticeRoutes(router, s);
    const koa = new Koa();
    koa.use(requestContext(s.log));
    koa.use(railNoticeGate(s, take));
    koa.use(jsonBody());
    koa.use(router.routes());
    return supertest(koa.callback());
  }

  beforeEach(() => {
    bodies.length = 0;
    verdict = { confirmed: [], refused: [] };
  });

  it('reaches a rail the registry holds, at /rails/{rail}/{token}{suffix}', async () => {
    const res = await app().post(`/rails/fake/${TOKEN}/notices`).send({ items: [] });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ received: 0 });
    expect(bodies).to.deep.equal([{ items: [] }]);
  });

  it("answers with the connector's verdict: items it does not confirm are refused", async () => {
    verdict = { confirmed: [], refused: [{ endToEndId: 'tx-1', reason: 'no such transfer' }] };
    const res = await app()
      .post(`/rails/fake/${TOKEN}/notices`)
      .send({ items: ['tx-1'] });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('NOTICE_NOT_CONFIRMED');
    expect(res.body.details.refused[0].endToEndId).to.equal('tx-1');
  });

  it('refuses a wrong token, and a limited address, before the body is read', async () => {
    const wrong = await app().post('/rails/fake/not-it/notices').send({ items: [] });
    expect(wrong.status).to.equal(401);
    const limited = await app(() => 7)
      .post(`/rails/fake/${TOKEN}/notices`)
      .send({ items: [] });
    expect(limited.status).to.equal(429);
    expect(limited.headers['retry-after']).to.equal('7');
    expect(bodies).to.deep.equal([]);
  });

  it('leaves other paths and rails to the router (404)', async () => {
    expect((await app().post(`/rails/fake/${TOKEN}/other`).send({})).status).to.equal(404);
    expect((await app().post(`/rails/pix/${TOKEN}/pix`).send({})).status).to.equal(404);
  });
});
