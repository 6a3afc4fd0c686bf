// docs/configuration.md cannot drift from the code: its first table lists exactly the variables config/index.ts
// reads (itself, and through each rail's rails/*/config.ts), and every other variable the application or the npm
// scripts read is listed somewhere on the page. The README's configuration table names the same variables.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** Every `env.NAME` / `process.env.NAME` in the given files. */
function envReads(files: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of files)
    for (const m of read(file).matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g))
      found.set(m[1], [...(found.get(m[1]) ?? []), file]);
  return found;
}

/** The .ts/.js files under `dir`, recursively, relative to the root. */
function sources(dir: string, ext = /\.(ts|js)$/): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' ? [] : sources(rel, ext);
    return ext.test(e.name) ? [rel] : [];
  });
}

/** The variable names in the first column of the tables under `## heading` (every `NAME` in backticks). */
function tableVariables(markdown: string, heading?: string): Set<string> {
  let text = markdown;
  if (heading) {
    const start = markdown.indexOf(`\n## ${heading}\n`);
    expect(start, `the page has a "## ${heading}" section`).to.be.greaterThan(-1);
    const end = markdown.indexOf('\n## ', start + 1);
    text = markdown.slice(start, end < 0 ? undefined : end);
  }
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!first) continue;
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]);
  }
  return names;
}

// Set by the shell or the OS, not settings of Cambio.
const SYSTEM = new Set(['PATH', 'HOME', 'USER']);

describe('docs/configuration.md', () => {
  const doc = read('docs/configuration.md');

  it('lists exactly the variables config/index.ts reads, in its first table', () => {
    const railConfigs = sources('rails').filter((f) => path.basename(f) === 'config.ts');
    expect(railConfigs, "the rails' own settings").to.include(path.join('rails', 'pix', 'config.ts'));
    const inConfig = new Set(envReads([...sources('config'), ...railConfigs]).keys());
    const inTable = tableVariables(doc, 'Read by config/index.ts');
    expect(inConfig.size, 'config/ reads variables').to.be.greaterThan(40);
    const undocumented = [...inConfig].filter((n) => !inTable.has(n)).sort();
    const stale = [...inTable].filter((n) => !inConfig.has(n)).sort();
    expect(undocumented, 'read by config/ but missing from docs/configuration.md').to.deep.equal([]);
    expect(stale, 'in docs/configuration.md but not read by config/').to.deep.equal([]);
  });

  it('lists every other variable the application and the npm scripts read', () => {
    const dirs = ['api', 'activities', 'cli', 'db', 'domain', 'lists', 'payments', 'rails', 'statements', 'webhooks'];
    dirs.push('worker', 'workflows', 'psp-simulator');
    const files = [...dirs.flatMap((d) => sources(d)), ...sources('scripts', /\.js$/), ...sources('bin')];
    const documented = tableVariables(doc);
    const missing = [...envReads(files)]
      .filter(([name]) => !SYSTEM.has(name) && !documented.has(name))
      .map(([name, where]) => `${name} (${[...new Set(where)].join(', ')})`);
    expect(missing, 'read by the code but missing from docs/configuration.md').to.deep.equal([]);
  });

  // decisions.md, Configuration: "The README lists them all".
  it("is what the README's configuration table lists, name for name", () => {
    const readme = read('README.md');
    const inReadme = tableVariables(readme, 'Configuration');
    const inDoc = tableVariables(doc, 'Read by config/index.ts');
    expect([...inReadme].sort()).to.deep.equal([...inDoc].sort());
  });

  it('fails for a variable it does not list (the check can fail)', () => {
    const inTable = tableVariables(doc, 'Read by config/index.ts');
    expect(inTable.has('NOT_A_CAMBIO_SETTING')).to.equal(false);
    expect(inTable.has('PORT')).to.equal(true);
  });
});
