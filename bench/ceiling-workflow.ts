// The ceiling of bench:operations: a workflow with one no-op activity, run by a worker inside the bench
// process on a task queue of its own, on the same Temporal server as Cambio's worker.
import { proxyActivities } from '@temporalio/workflow';

export interface CeilingActivities {
  noop(): Promise<void>;
}

const { noop } = proxyActivities<CeilingActivities>({ startToCloseTimeout: '30s' });

export async function ceilingWorkflow(): Promise<string> {
  await noop();
  return 'COMPLETED';
}
