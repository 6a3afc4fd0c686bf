// Operator actions are audited (decisions 0049, 0069): every acting CLI command appends a hash-chained row, the table
// refuses UPDATE and DELETE, `cambio audit verify` finds an edited row; client secrets rotate with a grace period.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { createAccount, uploadAllDocuments, submitReview, activeAccount } from '../helpers/fixtures';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { cambio, cambioFails, cambioWith } from '../helpers/cli';
import type { AuditEntry } from '../../db/repositories/audit-log';

// The row as `cambio audit list --json` prints it.
type AuditRow = AuditEntry;

const json = async (...args: string[]) => JSON.parse((await cambio(...args, '--json')).stdout);

async function underReview(c: TestCustomer): Promise<string> {
  const account = await createAccount(c, { assets: ['BRL'] });
  await uploadAllDocuments(c, account.id);
  await submitReview(c, account.id);
  return account.id;
}

async function pendingInstruction(c: TestCustomer, key: string): Promise<string> {
  const { http } = await stack();
  const body = beneficiaryBody(pixInstruction('EMAIL', key));
  const created = await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(body);
  expect(created.status).to.equal(201);
  return created.body.paymentInstructions[0].id;
}

describe('operator audit log and secret rotation', function () {
  this.timeout(180000);

  it('records every operator action with who, what, target and reason; concurrent writers keep one chain', async () => {
    const since = new Date().toISOString();
    const missingLog = randomUUID();
    const { services } = await stack();
    const created = await json('customer', 'create', '--name', 'Audited Ltda', '--operator', 'alice');
    const c = await newCustomer('Audited Ops');
    const account = await activeAccount(c, ['BRL']);
    const [toApprove, toReject] = [await underReview(c), await underReview(c)];
    const instrA = await pendingInstruction(c, 'a@example.com');
    const instrB = await pendingInstruction(c, 'b@example.com');
    const dep = await openDeposit(c, account.id, '10.00');
    const paid = await Promise.all([pay(c, dep.id, '10.00'), pay(c, dep.id, '10.00'), pay(c, dep.id, '10.00')]);
    const extra = paid.map((r) => r.body).filter((p) => p.status === 'UNMATCHED');
    // A TED: the rest of a short payment is what an operator records from the bank statement with `deposit pay`
    // (a deposit charged at its provider is refused there, decision 0340).
    const short = await openDeposit(c, account.id, '10.00', undefined, { rail: 'TED', asset: 'BRL' });
    await eventually(
      () => pay(c, short.id, '5.00'),
      (r) => r.status === 200,
    );

    // Several CLI processes at once: the chain lock queues them, nothing forks.
    await Promise.all([
      cambio('customer', 'disable', created.customerId, '--operator', 'bob'),
      cambio('account', 'approve', toApprove),
      cambio('account', 'reject', toReject, '--reason', 'blurry documents'),
      cambio('account', 'tag', account.id, '--key', 'desk', '--value', 'latam'),
    ]);
    await Promise.all([
      cambio('customer', 'enable', created.customerId),
      cambio('instruction', 'approve', instrA),
      cambio('instruction', 'reject', instrB, '--reason', 'wrong key'),
      cambio('payment', 'return', extra[0].id, '--reason', 'paid twice', '--outside', '--reference', 'BANK-REF-7'),
      cambio('payment', 'credit', extra[1].id, '--account', account.id),
    ]);
    await Promise.all([
      cambio(
        'deposit',
        'pay',
        short.id,
        '--amount',
        '5.00',
        '--asset',
        'BRL',
        '--end-to-end',
        `E${randomUUID().slice(0, 8)}`,
      ),
      cambio('customer', 'rotate-secret', created.customerId),
      cambioFails('withdrawal', 'approve', dep.id),
      cambioFails('withdrawal', 'reject', randomUUID()),
      cambioFails('webhook', 'redeliver', missingLog.toUpperCase()),
    ]);
    await cambio('deposit', 'replay', short.id);

    const rows: AuditRow[] = await json('audit', 'list', '--since', since);
    const actions = rows.map((r) => r.action).sort();
    expect(actions).to.include.members([
      'customer.create',
      'customer.disable',
      'customer.enable',
      'customer.rotate-secret',
      'account.approve',
      'account.reject',
      'account.tag',
      'instruction.approve',
      'instruction.reject',
      'payment.return',
      'payment.credit',
      'deposit.pay',
      'deposit.replay',
      'withdrawal.approve',
      'withdrawal.reject',
      'webhook.redeliver',
    ]);
    const one = (action: string) => rows.find((r) => r.action === action)!;
    expect(one('customer.create')).to.deep.include({ operator: 'alice', target: created.customerId });
    expect(one('customer.disable')).to.deep.include({ operator: 'bob', target: created.customerId });
    expect(one('customer.enable').operator, 'CAMBIO_OPERATOR').to.equal('test-operator');
    expect(one('account.reject')).to.deep.include({ target: toReject, reason: 'blurry documents' });
    // An id typed in upper case is named as every other, in lower case (cli/ids.ts).
    expect(one('webhook.redeliver').target).to.equal(missingLog);
    expect(one('payment.return')).to.deep.include({ target: extra[0].id, reason: 'paid twice' });
    expect(one('payment.credit').details).to.deep.include({ account: account.id, outcome: 'OK' });
    // What an action learns as it runs is in its row, which commits in the action's own transaction.
    const credited = await json('payment', 'list', '--customer', c.customerId, '--status', 'CREDITED');
    expect(one('payment.credit').details).to.deep.include({
      operationId: credited[0].credit.operationId,
      amount: credited[0].amount,
    });
    const returnedPayment = (await json('payment', 'list', '--customer', c.customerId, '--status', 'RETURNED'))[0];
    expect(one('payment.return').details).to.deep.include({
      outside: true,
      reference: 'BANK-REF-7',
      returnEndToEndId: 'BANK-REF-7',
      amount: returnedPayment.amount,
    });
    expect(one('customer.rotate-secret').details).to.have.keys(['clientId', 'previousSecretExpiresAt', 'outcome']);
    expect(one('customer.rotate-secret').details.clientId).to.equal(created.clientId);
    const refusedHold = one('withdrawal.approve').details.outcome;
    expect(refusedHold, 'a refused action is recorded with its code').to.equal('INVALID_STATE');
    expect(one('webhook.redeliver').details.outcome).to.equal('NOT_FOUND');
    expect(JSON.stringify(one('customer.rotate-secret'))).not.to.contain('sec_');
    const filtered: AuditRow[] = await json('audit', 'list', '--since', since, '--action', 'account.reject');
    expect(filtered.map((r) => r.id)).to.deep.equal([one('account.reject').id]);
    expect((await json('audit', 'verify')).ok).to.equal(true);

    // Append-only: the table refuses changes.
    const em = systemEm(services.orm);
    const victim = one('account.reject').id;
    const refused = await em
      .execute(`update audit_log set reason = 'nothing happened' where id = ?`, [victim])
      .catch((e: Error) => e);
    expect(String(refused)).to.contain('append-only');
    const notDeleted = await em.execute(`delete from audit_log where id = ?`, [victim]).catch((e: Error) => e);
    expect(String(notDeleted)).to.contain('append-only');
  });

  it('verify exits non-zero and names the row edited behind the trigger', async () => {
    const { services } = await stack();
    await cambio('customer', 'create', '--name', 'Chain Ltda');
    const rows: AuditRow[] = await json('audit', 'list');
    const victim = rows[Math.floor(rows.length / 2)];
    await systemEm(services.orm).transactional(async (tx) => {
      await tx.execute('alter table audit_log disable trigger audit_log_append_only');
      await tx.execute(`update audit_log set operator = 'mallory' where id = ?`, [victim.id]);
      await tx.execute('alter table audit_log enable trigger audit_log_append_only');
    });
    const broken = await cambioFails('audit', 'verify');
    expect(broken.exitCode).to.equal(1);
    expect(broken.body.details.id).to.equal(victim.id);
    expect(broken.body.message).to.contain(victim.id);
    // Put it back, so later runs of verify in this database hold again.
    await systemEm(services.orm).transactional(async (tx) => {
      await tx.execute('alter table audit_log disable trigger audit_log_append_only');
      await tx.execute(`update audit_log set operator = ? where id = ?`, [victim.operator, victim.id]);
      await tx.execute('alter table audit_log enable trigger audit_log_append_only');
    });
    expect((await json('audit', 'verify')).ok).to.equal(true);
  });

  it('rotates a client secret: both work during the grace period, then the old one is 401 INVALID_CLIENT', async () => {
    const { http } = await stack();
    const created = await json('customer', 'create', '--name', 'Rotating Ltda');
    const args = ['customer', 'rotate-secret', created.customerId, '--json'];
    const rotated = JSON.parse((await cambioWith({ CLIENT_SECRET_GRACE_SECONDS: '3' }, ...args)).stdout);
    expect(rotated).to.deep.include({ customerId: created.customerId, clientId: created.clientId });
    expect(rotated.clientSecret).to.be.a('string').and.not.equal(created.clientSecret);
    const token = (clientSecret: string) =>
      http.post('/api/oauth/client/token').send({ clientId: created.clientId, clientSecret });
    expect((await token(created.clientSecret)).status, 'old secret in the grace period').to.equal(200);
    expect((await token(rotated.clientSecret)).status, 'new secret').to.equal(200);
    const expired = await eventually(
      () => token(created.clientSecret),
      (r) => r.status !== 200,
      10000,
      500,
    );
    expect([expired.status, expired.body.code]).to.deep.equal([401, 'INVALID_CLIENT']);
    expect((await token(rotated.clientSecret)).status).to.equal(200);
    const unknown = await cambioFails('customer', 'rotate-secret', randomUUID());
    expect(unknown.body.code).to.equal('NOT_FOUND');
  });

  it('a rotation run again before its new secret was used keeps the secret the customer runs on', async () => {
    const { http } = await stack();
    const created = await json('customer', 'create', '--name', 'Rerun Rotation Ltda');
    const token = (clientSecret: string) =>
      http.post('/api/oauth/client/token').send({ clientId: created.clientId, clientSecret });
    expect((await token(created.clientSecret)).status, 'the customer runs on its first secret').to.equal(200);
    // The operator's first rotation died before its secret reached anybody; the command is run again.
    const lost = await json('customer', 'rotate-secret', created.customerId);
    const rerun = await json('customer', 'rotate-secret', created.customerId);
    expect((await token(created.clientSecret)).status, 'the secret in use, in its grace period').to.equal(200);
    expect((await token(rerun.clientSecret)).status, 'the new secret').to.equal(200);
    const unused = await token(lost.clientSecret);
    expect([unused.status, unused.body.code], 'the secret nobody saw').to.deep.equal([401, 'INVALID_CLIENT']);
    // Once the new secret is in use, the next rotation ends the old one as before: one previous secret is kept.
    const next = await json('customer', 'rotate-secret', created.customerId);
    const old = await token(created.clientSecret);
    expect([old.status, old.body.code]).to.deep.equal([401, 'INVALID_CLIENT']);
    expect((await token(rerun.clientSecret)).status).to.equal(200);
    expect((await token(next.clientSecret)).status).to.equal(200);
  });
});
