// A worker killed mid-delivery (SIGKILL while the receiver holds the POST open) loses nothing: a new worker
// process picks the delivery up and finishes it with the same message id and body, as a new attempt (the cut one
// is listed as interrupted, never sent twice under one number).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { tenantEm } from '../../db/orm';
import type { ServiceContext } from '../../services/context';
import { createBeneficiary } from '../../services/beneficiaries';
import { createSubscription } from '../../webhooks/subscriptions';
import { getExecutionLog, listAttempts } from '../../webhooks/execution-logs';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { kill, killAll, spawnWorker, webhookQueueOf } from '../helpers/processes';
import { Receiver } from '../helpers/receiver';
import { eventually, newCustomer, stack } from '../helpers/stack';

const PAGE = { limit: 10, direction: 'NEXT', sortOrder: 'ASCENDING' } as const;

describe('webhook delivery across a worker crash', function () {
  this.timeout(180000);
  let receiver: Receiver;
  // The receiver listens on loopback, and the first POST must outlive the kill.
  const workerEnv = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_SECONDS: '30' };

  before(async () => {
    receiver = await new Receiver().start();
  });

  after(async () => {
    await killAll();
    await receiver?.stop();
  });

  it('finishes the delivery on a new worker with the same message id and body', async () => {
    const { services, config } = await stack();
    const taskQueue = `cambio-webhook-crash-${randomUUID()}`;
    const ctx: ServiceContext = {
      ...services,
      config: { ...config, taskQueue, webhookTaskQueue: webhookQueueOf(taskQueue) },
    };
    const c = await newCustomer('Crash Hooks SA');
    const em = () => tenantEm(services.orm, c.customerId);
    const sub = await createSubscription(ctx, em(), {
      url: receiver.url,
      resources: [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }],
    });
    // The first POST hangs: the worker dies while it is in flight. The next one answers at once.
    receiver.script = [{ status: 200, delayMs: 60000 }];
    receiver.fallback = { status: 200 };

    const first = await spawnWorker('worker-1', taskQueue, { env: workerEnv });
    await createBeneficiary(ctx, em(), beneficiaryBody(pixInstruction('EMAIL', 'crash@example.com')) as never);
    await eventually(
      async () => receiver.received.length,
      (n) => n === 1,
      30000,
      20,
    );
    await kill(first);
    expect(first.child.signalCode).to.equal('SIGKILL');
    const [row] = (await services.orm.em
      .fork()
      .getConnection()
      .execute('select id, attempts from execution_logs where subscription_id = ?', [sub.id])) as Array<{
      id: string;
      attempts: number;
    }>;
    expect(row.attempts, 'the attempt in flight was not recorded').to.equal(0);

    const second = await spawnWorker('worker-2', taskQueue, { pollers: 0, env: workerEnv });
    await eventually(
      async () => receiver.received.length,
      (n) => n === 2,
      120000,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nworker output:\n${[first, second].map((p) => p.output()).join('\n---\n')}`);
    });
    const [crashed, resumed] = receiver.received;
    expect(resumed.headers['webhook-id']).to.equal(crashed.headers['webhook-id']);
    expect(resumed.body).to.equal(crashed.body);
    const log = await eventually(
      () => getExecutionLog(em(), sub.id, row.id).catch(() => undefined),
      (l) => l?.status === 'SUCCESS',
    );
    // The cut attempt is not sent again under its number: it is listed as interrupted, and attempt 2 took its place.
    expect(log).to.include({
      messageId: crashed.headers['webhook-id'],
      httpStatus: 200,
      retryAttempts: 1,
      payload: crashed.body,
    });
    const attempts = await listAttempts(em(), sub.id, row.id, PAGE, config.cursorSecret);
    expect(attempts.data.map((a) => [a.attempt, a.httpStatus])).to.deep.equal([
      [1, 0],
      [2, 200],
    ]);
    expect(attempts.data[0].error).to.match(/^interrupted/);
    expect(receiver.received).to.have.length(2);
  });
});
