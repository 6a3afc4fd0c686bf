// Temporal's time-skipping test server for tests of long timers: Postgres and the rest of the stack are the real
// shared ones; only Temporal's clock is virtual.
import type { Context } from 'mocha';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { ServiceContext } from '../../services/context';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { queueWorkerOptions } from '../../worker/queues';
import { startWorkflowStartRelay } from '../../worker/workflow-start-relay';
import { stack } from './stack';
import { workflowBundle } from './workflow-bundle';

// temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD (every attribute of ours is a Keyword).
const INDEXED_VALUE_KEYWORD = 2;

export interface TimeSkipping {
  env: TestWorkflowEnvironment;
  /**
   * Runs `fn` while workers on the test server serve `ctx.config.taskQueue`, `ctx.config.webhookTaskQueue` and
   * `ctx.config.railsTaskQueue` (provider calls) with the activities of `ctx` (each queue's worker sized as in
   * worker/main.ts; the rails' calls reach the PSP `ctx.config.pix` names, none when it names none), and the first
   * two queues' outbox relays start their workflows there. Give `ctx` task queues of its own: a relay of the shared
   * stack's queues would start the same outbox rows on the other server.
   */
  withWorker<T>(ctx: ServiceContext, fn: () => Promise<T>): Promise<T>;
}

/**
 * The test server with our search attributes registered and the workflows bundled, from a `before` hook; skips
 * the suite (saying why on stderr) where TEMPORAL_TEST_SERVER_PATH is not set. The caller tears `env` down.
 */
export async function startTimeSkipping(hook: Context, suite: string): Promise<TimeSkipping> {
  const serverPath = process.env.TEMPORAL_TEST_SERVER_PATH;
  if (!serverPath) {
    process.stderr.write(
      `${suite}: skipped, TEMPORAL_TEST_SERVER_PATH is not set (\`npm test\` sets it to the time-skipping ` +
        `test server)\n`,
    );
    hook.skip();
  }
  // The stack installs the SDK runtime (with its logger): it must exist before the test environment's.
  await stack();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: serverPath! } },
  });
  // The test server rejects starts carrying unregistered search attributes; register ours as npm test does.
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, INDEXED_VALUE_KEYWORD])),
  });
  const bundle = await workflowBundle();
  return {
    env,
    async withWorker(ctx, fn) {
      const activities = createActivities({ config: ctx.config, orm: ctx.orm, rates: ctx.rates, temporal: env.client });
      const create = (taskQueue: string, options = {}) =>
        Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities, ...options });
      const worker = await create(ctx.config.taskQueue);
      const webhookWorker = await create(ctx.config.webhookTaskQueue, queueWorkerOptions('webhooks'));
      const railsWorker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: ctx.config.railsTaskQueue,
        activities,
        ...queueWorkerOptions('rails'),
      });
      const relays = [ctx.config.taskQueue, ctx.config.webhookTaskQueue].map((taskQueue) =>
        startWorkflowStartRelay({
          orm: ctx.orm,
          temporal: env.client,
          taskQueue,
          databaseUrl: ctx.config.databaseUrl,
          eager: false,
          onError: (err) => process.stderr.write(`time-skipping: outbox relay: ${String(err)}\n`),
        }),
      );
      try {
        return await railsWorker.runUntil(() => webhookWorker.runUntil(() => worker.runUntil(fn)));
      } finally {
        await Promise.all(relays.map((r) => r.stop()));
      }
    },
  };
}
