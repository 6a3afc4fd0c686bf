// The modules import each other in one direction only: no set of files reaches itself through imports (type-only
// imports included, since a type both sides need belongs in a file of its own). Tests, benches, scripts and
// migrations are left out; they import the project, never the other way.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const SKIP = new Set(['node_modules', 'dist', 'test', 'bench', 'scripts', 'migrations', 'docs']);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name.startsWith('.') || SKIP.has(e.name)) return [];
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Each file's imports of other project files: static, type-only, re-exports and dynamic `import()`. */
function importGraph(): Map<string, string[]> {
  const files = sources(ROOT);
  const known = new Set(files);
  const resolve = (from: string, spec: string) => {
    const base = path.resolve(path.dirname(from), spec);
    return [base, `${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts')].find((c) => known.has(c));
  };
  return new Map(
    files.map((f) => {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(f, 'utf8'), true, true);
      const targets = importedFiles
        .filter((i) => i.fileName.startsWith('.'))
        .map((i) => resolve(f, i.fileName))
        .filter((t): t is string => t !== undefined && t !== f);
      return [f, [...new Set(targets)]];
    }),
  );
}

/** The strongly connected components of more than one file (Tarjan), as sorted relative paths. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(ROOT, w));
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  return found;
}

describe('import graph', () => {
  it('has no import circles', () => {
    const graph = importGraph();
    expect(graph.size).to.be.greaterThan(100);
    expect(circles(graph)).to.deep.equal([]);
  });

  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['/a.ts', ['/b.ts']],
      ['/b.ts', ['/c.ts']],
      ['/c.ts', ['/a.ts']],
      ['/d.ts', ['/a.ts']],
    ]);
    expect(circles(graph).map((c) => c.length)).to.deep.equal([3]);
  });
});
