#!/usr/bin/env node
// The operator CLI in a checkout: TypeScript through tsx, so it never runs stale code (no build needed).
// Where only dist/ exists (the Docker image), run `node dist/cli/main.js` instead.
require('tsx/cjs');
require('../cli/main.ts');
