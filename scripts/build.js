#!/usr/bin/env node
'use strict';
// `npm run build`: TypeScript → dist/ (tsconfig.build.json, incremental, so an unchanged tree takes seconds), then
// removes what a deleted or renamed source left in dist/: a stale migration there would still be applied.
// Exit code: tsc's. Used by `npm start`, `npm run api|worker|migrate`, the benchmarks and the Dockerfile.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** dist/x/y.js(.map) whose x/y.ts is gone. */
function prune(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(file);
      if (fs.readdirSync(file).length === 0) fs.rmdirSync(file);
      continue;
    }
    const m = /^(.*)\.js(\.map)?$/.exec(entry.name);
    if (!m) continue;
    const source = path.join(ROOT, path.relative(DIST, dir), `${m[1]}.ts`);
    if (!fs.existsSync(source)) fs.rmSync(file);
  }
}

function build() {
  if (!fs.existsSync(TSC)) {
    console.error('[build] TypeScript is not installed (node_modules/typescript); run `npm ci` first');
    return 1;
  }
  const result = spawnSync(process.execPath, [TSC, '-p', path.join(ROOT, 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) return result.status ?? 1;
  if (fs.existsSync(DIST)) prune(DIST);
  return 0;
}

if (require.main === module) process.exit(build());

module.exports = { build };
