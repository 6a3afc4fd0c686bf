// One run of the CRYPTO deposit scanner (the `crypto-reconciliation` schedule, every EVM_SCAN_EVERY_SECONDS), on the
// rails' task queue, whose name the schedule passes: a workflow reads no config.
import { proxyActivities } from '@temporalio/workflow';
import type { CryptoActivities } from '../activities/crypto';

export async function cryptoScanWorkflow(railsTaskQueue: string) {
  const { scanCryptoChain } = proxyActivities<CryptoActivities>({
    taskQueue: railsTaskQueue,
    // Catching up after a day down reads thousands of ranges; it beats after each one and after each transfer it
    // confirms (each bounded by EVM_TIMEOUT_MS and the decision's 3 s). A worker that dies mid-range misses its
    // beat: the scan is tried again within 30 s, from the cursor (decision 0144).
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  });
  return scanCryptoChain();
}
