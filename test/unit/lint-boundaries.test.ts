// The layers `npm run lint` enforces (eslint.config.mjs, decisions 0119 and 0122): each fixture in
// test/fixtures/lint breaks them on the lines it marks, linted as if it sat at the path on its first line, so each
// rule is shown to fail.
// That the real tree breaks none is `npm run lint`'s own check, which `npm test` runs before mocha (decision 0139):
// linting the tree here again cost the suite about 10 s. Only the boundary rules run, without type information.
import { expect } from 'chai';
import { ESLint, Linter } from 'eslint';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/lint');
const BOUNDARY_RULES = new Set([
  'import-x/no-restricted-paths',
  'import-x/no-nodejs-modules',
  '@typescript-eslint/no-restricted-imports',
  'import-x/no-cycle',
]);

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => BOUNDARY_RULES.has(ruleId),
});

const found = (messages: Linter.LintMessage[]) =>
  messages.map((m) => `${m.line}: ${m.fatal ? `fatal ${m.message}` : m.ruleId}`).sort();

/** The files worker/bundle.ts puts in the workflow sandbox: what workflows/index.ts reaches by value imports. */
function bundled(): string[] {
  const seen = new Set([path.join(ROOT, 'workflows/index.ts')]);
  for (const file of seen) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
    for (const s of source.statements) {
      if (!(ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) || !s.moduleSpecifier) continue;
      const clause = ts.isImportDeclaration(s) ? s.importClause : undefined;
      const bindings = clause?.namedBindings;
      const typeOnly =
        (ts.isExportDeclaration(s) && s.isTypeOnly) ||
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          bindings &&
          ts.isNamedImports(bindings) &&
          bindings.elements.every((e) => e.isTypeOnly));
      const spec = (s.moduleSpecifier as ts.StringLiteral).text;
      if (typeOnly || !spec.startsWith('.')) continue;
      const base = path.resolve(path.dirname(file), spec);
      const target = [`${base}.ts`, path.join(base, 'index.ts')].find((c) => fs.existsSync(c));
      if (target) seen.add(target);
    }
  }
  return [...seen].map((f) => path.relative(ROOT, f)).sort();
}

describe('lint: import boundaries', () => {
  for (const name of fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.ts.txt'))) {
    it(`reports exactly the marked lines of ${name}`, async () => {
      const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
      const as = /^\/\/ as: (\S+)/.exec(text)?.[1];
      expect(as, 'the first line names the path it is linted as').to.be.a('string');
      const expected = text
        .split('\n')
        .flatMap((line, i) => [...line.matchAll(/\/\/ error: (\S+)/g)].map((m) => `${i + 1}: ${m[1]}`))
        .sort();
      expect(expected.length, 'the fixture marks at least one error').to.be.greaterThan(0);
      const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, as!) });
      expect(found(result.messages)).to.deep.equal(expected);
    });
  }

  it('fails a use case and the CLI that import api/ (decision 0122)', async () => {
    const crossings = {
      'services/lint-fixture.ts': '../api/errors',
      'cli/commands/lint-fixture.ts': '../../api/errors',
    };
    for (const [as, target] of Object.entries(crossings)) {
      const text = `import { statusOf } from '${target}';\nexport const status = statusOf('NOT_FOUND');\n`;
      const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, as) });
      expect(found(result.messages), as).to.deep.equal(['1: import-x/no-restricted-paths']);
    }
  });

  it('holds every file of the workflow bundle to the sandbox rules', async () => {
    const files = bundled();
    expect(files).to.include.members(['workflows/operation.ts', 'webhooks/delivery-workflow.ts']);
    for (const file of files) {
      const config = await eslint.calculateConfigForFile(path.join(ROOT, file));
      expect(config.rules?.['import-x/no-nodejs-modules'], file).to.deep.equal([2]);
    }
  });
});
