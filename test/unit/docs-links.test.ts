// The docs hold together: every relative link in README.md and docs/**/*.md names a file that exists and, with a
// #fragment, a heading of that file (GitHub's anchors); and no page names a work item ("issue 17") instead of a
// topic. No network: external links are not followed.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function markdownFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(rel);
    return e.name.endsWith('.md') ? [rel] : [];
  });
}

/** The text outside fenced code blocks, where links are links. */
const prose = (md: string) => md.replace(/^```[\s\S]*?^```$/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(md).matchAll(/^#{1,6} (.*)$/gm)) {
    const base = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Every [text](target) of the page's prose, with inline code spans left out. */
export function links(md: string): string[] {
  const text = prose(md).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

/** What is wrong with `target` as written in `file` (undefined when it resolves). */
export function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // http:, https:, mailto:
  const [rel, fragment] = target.split('#', 2);
  const resolved = rel
    ? path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(rel))
    : path.join(ROOT, file);
  if (!fs.existsSync(resolved)) return `${target}: no such file`;
  if (fragment === undefined || fs.statSync(resolved).isDirectory()) return undefined;
  if (!resolved.endsWith('.md')) return undefined;
  const known = anchors(fs.readFileSync(resolved, 'utf8'));
  return known.has(fragment) ? undefined : `${target}: no heading with anchor #${fragment}`;
}

const FILES = ['README.md', ...markdownFiles('docs')];

describe('README.md and docs/', () => {
  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    let count = 0;
    for (const file of FILES) {
      const md = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const target of links(md)) {
        count++;
        const problem = brokenLink(file, target);
        if (problem) broken.push(`${file}: ${problem}`);
      }
    }
    expect(count, 'links checked').to.be.greaterThan(100);
    expect(broken).to.deep.equal([]);
  });

  it('name topics, never work items', () => {
    const named = FILES.flatMap((file) =>
      fs
        .readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .filter((line) => /\b(issue|work item|ticket)s? #?\d+/i.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(named).to.deep.equal([]);
  });

  it('catch a broken link and a missing anchor (the check can fail)', () => {
    expect(brokenLink('README.md', 'docs/nothing-here.md')).to.match(/no such file/);
    expect(brokenLink('README.md', 'docs/configuration.md#no-such-heading')).to.match(/no heading/);
    expect(brokenLink('README.md', 'docs/configuration.md#read-by-configindexts')).to.equal(undefined);
    expect(anchors('## API reference at `/docs`\n## Scale-out\n## Scale-out')).to.deep.equal(
      new Set(['api-reference-at-docs', 'scale-out', 'scale-out-1']),
    );
  });
});
