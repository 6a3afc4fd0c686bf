// The operator CLI while Temporal is down (decision 0102): a command that never calls Temporal runs; one that
// signals a workflow fails before it records anything. The stack's own Temporal stays up for the API; only the CLI
// processes are pointed at a port nothing listens on.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { createAccount, getAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';
import { newCustomer, stack, withoutRelay } from '../helpers/stack';
import { cambioFailsWith, cambioWith, cambioWithin } from '../helpers/cli';
import { freePort } from '../helpers/processes';
import { GrpcStallProxy } from '../helpers/grpc-stall';
import { pollUntil } from '../../services/poll';
import type { AuditEntry } from '../../db/repositories/audit-log';

describe('operator CLI while Temporal is down', function () {
  this.timeout(120000);

  it('creates, disables and enables a customer; an approval fails as a whole and records nothing', async () => {
    const { http, services } = await stack();
    const down = { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` };
    const offline = (...args: string[]) => cambioWith(down, ...args, '--json').then((r) => JSON.parse(r.stdout));
    const token = (c: { clientId: string; clientSecret: string }) =>
      http.post('/api/oauth/client/token').send({ clientId: c.clientId, clientSecret: c.clientSecret });

    const created = await offline('customer', 'create', '--name', 'Offline Ltda');
    expect((await token(created)).status).to.equal(200);
    expect(await offline('customer', 'disable', created.customerId)).to.include({ customerId: created.customerId });
    expect((await token(created)).body.code).to.equal('INVALID_CLIENT');
    expect((await offline('customer', 'enable', created.customerId)).disabledAt).to.equal(null);
    expect((await token(created)).status).to.equal(200);

    const c = await newCustomer('Offline Review');
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    const failure = await cambioFailsWith(down, 'account', 'approve', account.id);
    expect(failure.exitCode).to.equal(1);
    expect(failure.body.code).to.equal('SERVICE_UNAVAILABLE');
    expect(failure.body.message).to.contain(down.TEMPORAL_ADDRESS);
    expect(failure.body.details.recorded).to.equal(false);
    const decisions = await systemEm(services.orm).execute('select id from workflow_decisions where target = ?', [
      account.id,
    ]);
    expect(decisions).to.deep.equal([]);
    expect((await getAccount(c, account.id)).currentState.status).to.equal('UNDER_REVIEW');
    // Audited as refused, not as done: the audit log needs no Temporal either.
    const audited: AuditEntry[] = await offline('audit', 'list', '--action', 'account.approve');
    const approvals = audited.filter((row) => row.target === account.id);
    expect(approvals.map((row) => row.details.outcome)).to.deep.equal(['SERVICE_UNAVAILABLE']);
  });

  it('ends a decision whose signal Temporal never answers with SERVICE_UNAVAILABLE; the relay applies it', async () => {
    const { services, config } = await stack();
    const c = await newCustomer('Stalled Signal');
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    // Temporal answers the CLI's check (its first call), then stalls: a partition that drops packets, a frozen server.
    const [host, port] = config.temporalAddress.split(':');
    const proxy = new GrpcStallProxy(await freePort(), { host, port: Number(port) }, 1);
    await proxy.open();
    try {
      const cut = { TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}` };
      // Without the worker's relay meanwhile: it would take the signal's row on the decision's COMMIT and send it.
      const ran = await withoutRelay(() => cambioWithin(45_000, cut, 'account', 'approve', account.id));
      expect(ran.signal, 'the CLI ends by itself').to.equal(null);
      expect(ran.exitCode).to.equal(1);
      expect(ran.body?.code).to.equal('SERVICE_UNAVAILABLE');
      expect(ran.seconds).to.be.below(20);
      // Recorded before Temporal stalled: the operator is told it stands, not to run it again (a rerun is refused).
      expect(ran.body?.details.recorded).to.equal(true);
      expect(ran.body?.message).to.contain('was recorded').and.contain('do not run it again');
    } finally {
      await proxy.close();
    }
    // The decision committed before the send: it stands, and the worker's relay, back, delivers it.
    const decisions = await systemEm(services.orm).execute('select id from workflow_decisions where target = ?', [
      account.id,
    ]);
    expect(decisions).to.have.length(1);
    const applied = await pollUntil(
      () => getAccount(c, account.id),
      (a) => a.currentState.status !== 'UNDER_REVIEW',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(applied.currentState.status).to.equal('ACTIVE');
  });

  it('answers SERVICE_UNAVAILABLE, one JSON line, when Postgres does not answer, to reads and actions', async () => {
    const down = { DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/cambio` };
    for (const args of [
      ['payment', 'list'],
      ['customer', 'create', '--name', 'Nobody Ltda'],
    ]) {
      const failure = await cambioFailsWith(down, ...args);
      expect(failure.exitCode, args.join(' ')).to.equal(1);
      expect(failure.body.code, args.join(' ')).to.equal('SERVICE_UNAVAILABLE');
      expect(failure.body.message).to.contain('ECONNREFUSED').and.contain('run it again later');
      expect(failure.body.details.recorded, 'nothing was recorded').to.equal(false);
    }
  });
});
