// rails/registry.ts is the one list of rails (decision 0118): no other source file names a rail, and a rail the
// registry holds is reached by the generic parts (here the notice route) with nothing else to change. Its settings
// are found through rails/settings.ts and its simulated provider through psp-simulator/providers.ts (decision 0146):
// config/ and `npm start` (scripts/start.js) name no rail, not even by its variables' prefix.
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
import type { ServiceContext } from '../../services/context';
import { loadConfig } from '../../config';
import { NoticeRejectedError } from '../../rails/errors';
import type { NoticeVerdict, RailConnector, RailEntry } from '../../rails/rail';
import { RAIL_ENTRIES, RAILS, railsFromConfig } from '../../rails/registry';
import { keepRailNoticesRegistered } from '../../worker/rail-notices';
import { RAIL_SETTINGS } from '../../rails/settings';
import { SIMULATED_PROVIDERS } from '../../psp-simulator/providers';

const ROOT = path.resolve(__dirname, '../..');
// Tests, docs, benches (clients of the API, naming rails as a customer would) and migrations (history) may name one;
// so may the simulated providers, whose protocol words can be a rail's name (Open Finance's transaction type "TED").
const SKIP = new Set([
  'node_modules',
  'dist',
  'test',
  'bench',
  'scripts',
  'migrations',
  'docs',
  'rails',
  'psp-simulator',
]);

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

/**
 * The words that name a rail: its name, its slug, and the first word of each variable only its settings module
 * (rails/<slug>/config.ts) reads (PIX of PIX_PSP_URL, EVM of EVM_RPC_URL).
 */
function railWords(): Set<string> {
  const words = new Set<string>();
  const readers = new Map<string, Set<string>>();
  for (const e of RAIL_ENTRIES) {
    words.add(e.rail.toLowerCase()).add(e.slug);
    const text = fs.readFileSync(path.join(ROOT, 'rails', e.slug, 'config.ts'), 'utf8');
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9]*)_?/g))
      readers.set(m[1], new Set([...(readers.get(m[1]) ?? []), e.slug]));
  }
  for (const [prefix, slugs] of readers) if (slugs.size === 1) words.add(prefix.toLowerCase());
  return words;
}

/** Where a source's code (identifiers, strings, template parts; comments aside) says one of `words`. */
function railWordsIn(file: string, text: string, words: Set<string>): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const said =
      ts.isIdentifier(node) || ts.isPrivateIdentifier(node)
        ? node.text
        : ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)
          ? node.text
          : undefined;
    if (said !== undefined) {
      const whole = said.toLowerCase();
      const parts = said
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .toLowerCase()
        .split(/[^a-z0-9]+/);
      const hit = words.has(whole) ? whole : parts.find((w) => words.has(w));
      if (hit) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} (${hit})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every .ts file under `dir`, relative to the root. */
const tsFiles = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? tsFiles(path.join(dir, e.name)) : /\.ts$/.test(e.name) ? [path.join(dir, e.name)] : [],
    );

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

  it("finds each rail's settings in rails/settings.ts: config/ and npm start name no rail", () => {
    const folders = fs
      .readdirSync(path.join(ROOT, 'rails'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(Object.keys(RAIL_SETTINGS)).to.have.members(folders);
    const words = railWords();
    expect([...words]).to.include.members(['pix', 'pix_key', 'boleto', 'ted', 'crypto', 'evm']);
    const files = [...tsFiles('config'), path.join('scripts', 'start.js')];
    expect(files).to.include.members([path.join('config', 'production.ts'), path.join('config', 'index.ts')]);
    const said = files.flatMap((f) => railWordsIn(f, fs.readFileSync(path.join(ROOT, f), 'utf8'), words));
    expect(said).to.deep.equal([]);
    // The check can fail: a line of the start script as it was, and a secret's name in config/production.ts.
    expect(railWordsIn('start.js', 'if (!env.TED_ACCOUNTS_URL) childEnv.X = `${pspUrl}/open-finance`;', words)).to.eql([
      'start.js:1 (ted)',
    ]);
    expect(railWordsIn('p.ts', "names.push('PIX_CLIENT_SECRET'); const evmRpcUrl = 1;", words)).to.have.length(2);
  });

  it('mounts every simulated provider of psp-simulator/, each giving Cambio the variable that names it', () => {
    const folders = fs
      .readdirSync(path.join(ROOT, 'psp-simulator'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(ROOT, 'psp-simulator', e.name, 'index.ts')))
      .map((e) => e.name);
    expect(SIMULATED_PROVIDERS.map((p) => p.name)).to.have.members(folders);
    for (const p of SIMULATED_PROVIDERS) {
      const settings = p.settings('http://127.0.0.1:4010');
      expect(settings[p.chosenBy], `${p.name} sets ${p.chosenBy}`).to.be.a('string').and.not.equal('');
    }
  });

  it('redacts the token of any rail from logged paths', () => {
    expect(loggablePath('/rails/pix/s3cret/pix')).to.equal('/rails/pix/<token>/pix');
    expect(loggablePath('/rails/fake/s3cret/notices')).to.equal('/rails/fake/<token>/notices');
  });

  it("gives a stand-in boleto a bank's due date: a business day in Brasília, not the window's UTC day", () => {
    const boleto = RAIL_ENTRIES.find((e) => e.rail === 'BOLETO')!;
    const dueDate = (windowEnd: string) => boleto.fundingInstruction('op', 'BRL', new Date(windowEnd)).dueDate;
    // A window ending on a Saturday is due on the Monday; one ending at 01:00 UTC on a Tuesday ends on the Monday
    // evening in Brasília.
    expect(dueDate('2030-06-01T15:00:00Z')).to.equal('2030-06-03');
    expect(dueDate('2030-06-04T01:00:00Z')).to.equal('2030-06-03');
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
    notices: { suffix: '/notices', token: () => TOKEN, timeoutMs: () => 1000 },
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

  it('has a worker register the notice URL of every rail that takes notices, at its slug and token', async () => {
    const urls: string[] = [];
    const connector = {
      ...fakeConnector,
      notices: {
        ...fakeConnector.notices!,
        registerNotices: async (url: string) => {
          urls.push(url);
        },
      },
    };
    const config = { ...loadConfig({}), publicBaseUrl: 'https://cambio.example' };
    // The fake rail, and one whose entry takes notices but has no provider here: only the first is registered.
    const unconfigured: RailEntry = { ...fakeEntry, rail: 'GHOST', slug: 'ghost', connector: () => undefined };
    const rails = railsFromConfig(config, [{ ...fakeEntry, connector: () => connector }, unconfigured]);
    await keepRailNoticesRegistered(rails, config, pino({ level: 'silent' })).done;
    expect(urls).to.deep.equal([`https://cambio.example/rails/fake/${TOKEN}`]);
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
