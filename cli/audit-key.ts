import type { Config } from '../config';
import { auditKeyOf, AuditKey } from '../db/repositories/audit-log';

// Public on purpose: in sandbox mode (local use, tests of an integration) the chain is keyed with this, so it
// still detects an accidental edit, but it proves nothing against someone who reads this file. `verify` says so.
export const SANDBOX_AUDIT_KEY = 'cambio sandbox audit key: public, proves nothing';

// 32 characters: what `openssl rand -hex 16` prints at least; shorter secrets are guessable offline from one row.
const MIN_KEY_LENGTH = 32;

/**
 * The key of the audit chain (decision 0069): AUDIT_KEY, required by every audited command and by `audit verify`
 * outside sandbox mode, so that a deployment can never write rows that anyone with table access could recompute. In
 * sandbox mode, without AUDIT_KEY, the public sandbox key.
 */
export function auditKey(config: Pick<Config, 'sandbox'>, env: NodeJS.ProcessEnv = process.env): AuditKey {
  const secret = env.AUDIT_KEY;
  if (secret) {
    if (secret.length < MIN_KEY_LENGTH) {
      throw new Error(`AUDIT_KEY must be at least ${MIN_KEY_LENGTH} characters (e.g. \`openssl rand -hex 32\`)`);
    }
    return auditKeyOf(secret);
  }
  if (config.sandbox) return auditKeyOf(SANDBOX_AUDIT_KEY);
  throw new Error(
    'AUDIT_KEY is not set: operator actions are refused outside sandbox mode until the audit chain has its key',
  );
}

export const isSandboxKey = (key: AuditKey): boolean => key.id === auditKeyOf(SANDBOX_AUDIT_KEY).id;
