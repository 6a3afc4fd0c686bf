import { assertLedgerBalanced } from './money';
import { stackStarted, stopStack } from './stack';

// Registered by .mocharc.json for every file.
export const mochaHooks = {
  // The ledger invariants hold after every test that touched the stack: entries balance per asset, running
  // balances equal their entries, nothing is negative.
  async afterEach() {
    if (stackStarted()) await assertLedgerBalanced();
  },
  async afterAll() {
    await stopStack();
  },
};
