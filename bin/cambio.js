#!/usr/bin/env node
// The operator CLI is TypeScript run through tsx, like the API and the worker.
require('tsx/cjs');
require('../cli/main.ts');
