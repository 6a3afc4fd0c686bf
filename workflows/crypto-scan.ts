// One run of the CRYPTO deposit scanner (the `crypto-reconciliation` schedule, every EVM_SCAN_EVERY_SECONDS), on the
// rails' task queue, whose name the schedule passes: a workflow reads no config.
import { proxyActivities } from '@temporalio/workflow';
import type { CryptoActivities } from '../activities/crypto';

export async function cryptoScanWorkflow(railsTaskQueue: string) {
  const { scanCryptoChain } = proxyActivities<CryptoActivities>({
    taskQueue: railsTaskQueue,
    // Catching up after a day down reads thousands of ranges; it beats after each one.
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  });
  return scanCryptoChain();
}
