// A workflow with one activity and nothing else, for measuring in which order a task queue dispatches tasks
// (test/integration/fairness-keys.test.ts). Bundled on its own, apart from Cambio's workflows.
import * as wf from '@temporalio/workflow';

export interface ProbeActivities {
  probeDone(label: string): Promise<void>;
}

const { probeDone } = wf.proxyActivities<ProbeActivities>({ startToCloseTimeout: '30s' });

export async function fairnessProbeWorkflow(label: string): Promise<void> {
  await probeDone(label);
}
