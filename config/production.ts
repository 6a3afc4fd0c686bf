// Outside sandbox mode a secret is never a default (../shared/spec/decisions.md, "A claim is not money"): the API
// and the worker refuse to start while one is unset or holds a value this repository publishes, and name every
// such variable at once (docs/decisions/0114). Each rail's own secrets and published values come from its settings
// module (rails/<name>/config.ts, listed in rails/settings.ts, decision 0146): this file names no rail.
import { railSandboxOnlyValues, railSecrets } from '../rails/settings';
import { bool } from './env-values';

/**
 * Values anyone can read in this repository: config/index.ts's defaults (docs/configuration.md prints them), each
 * rail's (its defaults, the simulated provider's, the benches' client secret), the values the test run used before
 * it made its own, and the public sandbox audit key. None of them is a secret, whichever variable holds it.
 */
export const PUBLISHED_SECRET_VALUES: readonly string[] = [
  'cambio-dev-webhook-secret-key',
  'cambio-dev-cursor-secret',
  ...railSandboxOnlyValues(),
  'cambio-test-secret',
  'cambio test audit key: thirty-two characters or more',
  // cli/audit-key.ts's SANDBOX_AUDIT_KEY (test/unit/production-secrets.test.ts keeps the two equal).
  'cambio sandbox audit key: public, proves nothing',
];

/** A variable that must hold a secret of the deployment's own outside sandbox mode, and why it is refused. */
export interface UnsafeSecret {
  name: string;
  problem: 'unset' | 'published';
}

// SANDBOX read as config/index.ts reads it (unset: off).
const sandboxOn = (env: NodeJS.ProcessEnv) => bool(env.SANDBOX, false);

/**
 * The secret variables a process outside sandbox mode must set: each rail's (a notice token, a provider's client
 * secret when that provider is configured: rails/<name>/config.ts says which), then the token signing key pair, the
 * key of webhook secrets at rest, the audit chain's key and the cursor key.
 */
export function requiredSecrets(env: NodeJS.ProcessEnv): string[] {
  return [...railSecrets(env), 'JWT_PRIVATE_KEY', 'JWT_PUBLIC_KEY', 'WEBHOOK_SECRET_KEY', 'AUDIT_KEY', 'CURSOR_SECRET'];
}

/** Every required secret that is unset (or empty) or holds a published value; none in sandbox mode. */
export function unsafeSecrets(env: NodeJS.ProcessEnv): UnsafeSecret[] {
  if (sandboxOn(env)) return [];
  const unsafe: UnsafeSecret[] = [];
  for (const name of requiredSecrets(env)) {
    const value = env[name];
    if (value === undefined || value.trim() === '') unsafe.push({ name, problem: 'unset' });
    else if (PUBLISHED_SECRET_VALUES.includes(value.trim())) unsafe.push({ name, problem: 'published' });
  }
  return unsafe;
}

/** `NAME (unset), NAME (a value published in Cambio)`: each unsafe secret and why. */
export const describeUnsafeSecrets = (unsafe: UnsafeSecret[]): string =>
  unsafe
    .map(({ name, problem }) => `${name} (${problem === 'unset' ? 'unset' : 'a value published in Cambio'})`)
    .join(', ');

/** What to do about them, after the list. */
export const UNSAFE_SECRETS_HINT =
  'Set each to a value of this deployment only, the same on every process (docs/operations.md, "Security: roles, ' +
  'keys and the sandbox"); SANDBOX=true is for local trials.';

/** Throws, naming each unsafe secret, when the process must not start (`processName`: "API" or "worker"). */
export function assertSecretsSet(processName: string, env: NodeJS.ProcessEnv): void {
  const unsafe = unsafeSecrets(env);
  if (!unsafe.length) return;
  throw new Error(
    `The ${processName} does not start outside sandbox mode while a secret is unset or public: ` +
      `${describeUnsafeSecrets(unsafe)}. ${UNSAFE_SECRETS_HINT}`,
  );
}

/** At the start of the API and the worker: the refusal on stderr and exit 1, before anything is opened. */
export function exitOnUnsafeSecrets(processName: string, env: NodeJS.ProcessEnv = process.env): void {
  try {
    assertSecretsSet(processName, env);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
