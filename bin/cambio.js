#!/usr/bin/env node
// The operator CLI in a checkout: TypeScript through tsx, so it never runs stale code (no build needed).
// Where only dist/ exists (the Docker image), run `node dist/cli/main.js` instead.
// tsx's ESM hooks as well as its CommonJS ones: the CLI loads its command groups with import()
// (cli/command-groups.ts), which node resolves as ESM, extensionless .ts paths included, only through them.
require('tsx/cjs');
import('tsx/esm').then(() => require('../cli/main.ts'));
