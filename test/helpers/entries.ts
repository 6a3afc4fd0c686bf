import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/**
 * The node arguments that run one of Cambio's programs (`api/main.ts`, `worker/main.ts`, `cli/main.ts`, ...) as its
 * own process. Under `npm test`, which builds dist/ for the run (scripts/test.js sets CAMBIO_TEST_DIST), the
 * compiled `dist/<entry>.js`, as a deployment runs it: it starts in about half the CPU time tsx needs, and a run
 * spawns some forty servers and eighty CLI commands. Under mocha run by hand, the TypeScript through tsx, so a
 * test never runs a dist/ older than the checkout.
 */
export function entryArgs(entry: string): string[] {
  if (process.env.CAMBIO_TEST_DIST === '1') return [path.join(ROOT, 'dist', entry.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', path.join(ROOT, entry)];
}

/** `node ...cliArgs() <command>`: the operator CLI (cli/main.ts; bin/cambio.js in a checkout is the same). */
export const cliArgs = (): string[] => entryArgs('cli/main.ts');
