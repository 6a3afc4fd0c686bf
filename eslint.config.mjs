// ESLint flat config: typescript-eslint's recommended rules, Prettier owns the layout (eslint-config-prettier turns
// the rules that would fight it off), and a 120-character limit that also covers comments, which Prettier does not
// wrap. Three type-aware rules catch promises nobody awaits; they cost one TypeScript program (about 15 s of CPU).
// import-x holds the layers and forbids import circles (about 3 s).
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The layers of docs/architecture.md, as import-x zones (decisions 0119, 0122). A zone's paths are folders
// from this directory, or globs; `!(a|b)/**` is "everything of ours but a and b" (node_modules is never ours).
const ours = (...allowed) => `!(${[...allowed, 'node_modules'].join('|')})/**`;
// The workflow sandbox: what worker/bundle.ts bundles from workflows/index.ts. The client side of starts and signals
// lives beside it in workflows/ but runs in the processes, never in the bundle.
const CLIENT_SIDE = ['workflows/start.ts', 'workflows/send-signal.ts', 'workflows/fairness.ts'];
const SANDBOX = ['workflows/**/!(start|send-signal|fairness).ts', 'webhooks/delivery-workflow.ts'];
// What both sides share: contracts that import nothing of ours (workflow ids, the decision signal's name, the search
// attributes). The client side takes nothing else of workflows/, so it never loads workflow code.
const CONTRACTS = 'ids|decision-signal|search-attributes';
// What of workflows/ code outside the sandbox may import as values: the contracts and the client side.
const CONTRACTS_AND_CLIENT = `${CONTRACTS}|start|send-signal|fairness`;
// An import path that reaches sandboxed workflow code (workflows/ but those, or the webhook delivery workflow).
const SANDBOX_IMPORT = [
  '^(\\.\\./)+(',
  'workflows(/index)?$',
  `|workflows/(?!(${CONTRACTS_AND_CLIENT})$)`,
  '|webhooks/delivery-workflow$',
  ')',
].join('');
// The production code that no whitelist below covers (the sandbox, domain/, db/, rails/ each list what they may
// import), so that one import breaks one zone and is reported once.
const REST = [
  'activities',
  'api',
  'bin',
  'cli',
  'config',
  'lists',
  'payments',
  'presenters',
  'rates',
  'services',
  'statements',
  'webhooks/**/!(delivery-workflow).ts',
  'worker',
  'workflows/@(start|send-signal|fairness).ts',
];
const restBut = (...left) => REST.filter((dir) => !left.includes(dir));
const ZONES = [
  {
    target: SANDBOX,
    from: ours('workflows', 'activities', 'rails', 'domain', 'webhooks'),
    message: 'Sandboxed workflow code imports only workflows/ and, as types, activities/, rails/ and domain/.',
  },
  {
    target: SANDBOX,
    from: ['webhooks/!(delivery-workflow).ts', 'workflows/@(start|send-signal|fairness).ts'],
    message: 'Sandboxed workflow code never imports the client side of starts and signals, nor the rest of webhooks/.',
  },
  {
    target: CLIENT_SIDE,
    // Both globs: import-x refuses a zone that mixes globs and plain paths.
    from: [`workflows/**/!(${CONTRACTS}|start|send-signal|fairness).ts`, 'webhooks/@(delivery-workflow).ts'],
    message: 'The client side of starts and signals takes only the contracts of workflows/, never workflow code.',
  },
  {
    target: 'domain',
    from: ours('domain'),
    message: 'domain/ holds pure rules: it imports nothing of ours outside domain/.',
  },
  {
    target: 'db',
    from: ours('db', 'domain', 'config', 'workflows'),
    message: 'db/ sits under everything but domain/ and config/ (and the workflow ids).',
  },
  {
    target: 'db',
    from: 'workflows/!(ids).ts',
    message: 'db/ sits under everything but domain/ and config/ (and the workflow ids).',
  },
  {
    target: 'rails',
    from: ours('rails', 'domain', 'config'),
    message: 'A rail connector speaks its provider and translates; it imports only rails/, domain/ and config/.',
  },
  {
    target: 'psp-simulator',
    from: ours('psp-simulator'),
    message: 'The simulated PSP is a process of its own: it imports nothing of Cambio.',
  },
  {
    target: 'sandbox-chain',
    from: ours('sandbox-chain'),
    message: 'The sandbox chain tooling (anvil, test tokens) is of its own: it imports nothing of Cambio.',
  },
  {
    target: [...REST, 'rails', 'db', 'domain'],
    from: ['test', 'bench', 'psp-simulator', 'sandbox-chain', 'scripts'],
    message: 'Production code never imports tests, benches, the simulated PSP, the sandbox chain or the scripts.',
  },
  {
    target: restBut('api'),
    from: 'api',
    message: 'api/ is the HTTP edge: nothing imports it; the CLI, the worker and the activities call services/.',
  },
  {
    target: 'services',
    from: 'presenters',
    message: 'A use case returns domain objects; the edge (api/routes, the CLI) presents them (presenters/).',
  },
  {
    target: restBut('cli', 'bin'),
    from: 'cli',
    message: 'cli/ is a process: only bin/ starts it.',
  },
  {
    target: restBut('cli', 'bin', 'worker'),
    from: 'worker',
    message: 'worker/ is a process: nothing under it imports it.',
  },
];

export default defineConfig(
  // db/migrations is generated by MikroORM (still type-checked); test/fixtures holds recorded histories.
  globalIgnores(['dist/', '.tools/', '.cambio/', 'db/migrations/', 'test/fixtures/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  prettier,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: { globals: globals.node },
    rules: {
      // TypeScript reaches the start and test scripts' CommonJS helpers (scripts/, untyped) through require.
      '@typescript-eslint/no-require-imports': ['error', { allow: ['/scripts/'] }],
      // A leading underscore names a value left unused on purpose (a skipped argument, a key taken out of a rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // The layers (decision 0119). The resolver and the extensions let import-x follow our extensionless imports
    // of .ts files; without the extensions no-cycle silently reads no dependency at all.
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.cjs', '.mjs'],
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.cjs', '.mjs', '.json'] })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: ZONES }],
    },
  },
  {
    // No import circles in production code (about 2 s of CPU on the whole tree). Type-only imports are not followed;
    // test/unit/import-circles.test.ts, which counts them too, stays.
    ignores: ['test/**', 'bench/**', 'scripts/**'],
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // Sandboxed workflow code: activities, rails and domain only as types (their values reach Postgres, providers
    // or node:crypto); no Node module, no Temporal client, worker or activity API.
    files: ['workflows/**/*.ts', 'webhooks/delivery-workflow.ts'],
    ignores: CLIENT_SIDE,
    rules: {
      'import-x/no-nodejs-modules': 'error',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'The workflow sandbox runs only @temporalio/workflow (and @temporalio/common).',
          })),
          patterns: [
            {
              regex: '^(\\.\\./)+(activities|rails|domain)(/|$)',
              allowTypeImports: true,
              message: 'Sandboxed workflow code imports activities/, rails/ and domain/ as types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The use cases and the views run in the processes, never in the workflow sandbox: they import its workflows
    // only as types (the ids and search attributes are contracts; starts and signals are the client side).
    files: ['services/**/*.ts', 'presenters/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: SANDBOX_IMPORT,
              allowTypeImports: true,
              message: 'services/ and presenters/ import sandboxed workflow code as types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests and benches read HTTP answers as loose JSON on purpose: checking their shape is the test's work.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The scripts and the bin shim are plain CommonJS that node runs without a build step.
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // After `prettier`, whose "off" would otherwise win. URLs and regex literals stay whole; strings and comments wrap.
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
);
