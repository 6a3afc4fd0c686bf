import type { Context } from 'mocha';
import { assertLedgerBalanced } from './money';
import { printProcessOutputs } from './processes';
import { setRunSecrets } from './secrets';
import { stackStarted, stopStack } from './stack';

// The run's secrets (test/helpers/secrets.ts), before the stack reads its config. Among them AUDIT_KEY, which the
// operator CLI requires outside sandbox mode: every CLI process a test spawns inherits it, so `cambio audit verify`
// checks the whole run's chain with one key.
setRunSecrets();

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
