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

export interface CeilingPostActivities {
  post(url: string, body: string): Promise<number>;
}

const { post } = proxyActivities<CeilingPostActivities>({ startToCloseTimeout: '30s' });

/** The ceiling of bench:webhooks: one ordinary activity that POSTs a body to a URL, as a delivery does. */
export async function ceilingPostWorkflow(url: string, body: string): Promise<number> {
  return post(url, body);
}
