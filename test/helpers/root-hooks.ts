import type { Context } from 'mocha';
import { assertLedgerBalanced } from './money';
import { printProcessOutputs } from './processes';
import { stackStarted, stopStack } from './stack';

// The operator CLI keys the audit chain with AUDIT_KEY (required outside sandbox mode): every CLI process a test
// spawns inherits this one, so `cambio audit verify` checks the whole run's chain with one key.
process.env.AUDIT_KEY ??= 'cambio test audit key: thirty-two characters or more';

// Registered by .mocharc.json for every file.
export const mochaHooks = {
  // A failed test prints what the processes it ran logged, so a flake in CI names its cause. Then the ledger
  // invariants hold after every test that touched the stack: entries balance per asset, running balances equal
  // their entries, nothing is negative.
  async afterEach(this: Context) {
    if (this.currentTest?.state === 'failed') printProcessOutputs(this.currentTest.fullTitle());
    if (stackStarted()) await assertLedgerBalanced();
  },
  async afterAll() {
    await stopStack();
  },
};
