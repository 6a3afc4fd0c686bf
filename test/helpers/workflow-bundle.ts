// The workflow code bundled once per mocha process. Bundling (webpack over workflows/) costs about 3 s of CPU, and
// every Worker or replay given `workflowsPath` bundles the same unchanged sources again: the suite did that
// about 30 times. The files do not change while mocha runs, so one bundle is the code every replay must accept.
import type { temporal as proto } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

let bundling: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The bundle of workflows/index.ts, built on first use and shared by the stack, replays and test workers. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundling ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: new DefaultLogger('WARN'),
  });
  return bundling;
}

/** Worker.runReplayHistory on the current workflow code: throws if `history` does not replay (nondeterminism). */
export async function replayOnCurrentCode(history: proto.api.history.v1.IHistory, workflowId?: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
}
