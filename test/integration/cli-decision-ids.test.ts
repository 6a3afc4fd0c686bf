// The operator CLI names what it decides by an id typed or pasted by a person: it must be read as the API reads a
// path id (decision 0066), a UUID in lower case, before it names a row, a lock or a workflow.
import { expect } from 'chai';
import { heldWithdrawal } from '../helpers/held-withdrawal';
import { cambio, cambioFails } from '../helpers/cli';
import { randomUUID } from 'node:crypto';
import { systemEm, tenantEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { recordAccountDecision } from '../../services/account-review';
import { eventually, newCustomer, stack, withoutRelay } from '../helpers/stack';
import { createAccount, getAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';

interface Refusal {
  exitCode: number;
  body: { code: string; message: string; details: Record<string, unknown> };
}

const who = { decisionId: randomUUID(), actor: 'operator:first' };

/** A CLI process that failed: its exit code and its error line. */
const refusal = (e: { code: number; stderr: string }): Refusal => ({
  exitCode: e.code,
  body: JSON.parse(e.stderr.trim().split('\n').pop()!),
});

describe('operator CLI: the ids it decides on', function () {
  this.timeout(120000);

  it('refuses an id that is not a UUID with VALIDATION_ERROR, never the failed SQL', async () => {
    const commands = [
      ['account', 'approve', 'not-a-uuid'],
      ['account', 'reject', 'not-a-uuid', '--reason', 'no'],
      ['account', 'tag', 'not-a-uuid', '--key', 'k', '--value', 'v'],
      ['withdrawal', 'approve', 'not-a-uuid'],
      ['withdrawal', 'reject', 'not-a-uuid'],
      ['deposit', 'replay', 'not-a-uuid'],
      ['deposit', 'pay', 'not-a-uuid', '--amount', '1.00', '--asset', 'BRL', '--end-to-end', 'E1'],
      ['customer', 'disable', 'not-a-uuid'],
      ['customer', 'enable', 'not-a-uuid'],
      ['customer', 'rotate-secret', '123'],
      ['payment', 'show', 'not-a-uuid'],
      ['payment', 'return', 'not-a-uuid', '--reason', 'r'],
      ['payment', 'credit', 'not-a-uuid', '--account', 'not-a-uuid'],
      ['payment', 'credit', '00000000-0000-4000-8000-000000000000', '--account', 'not-a-uuid'],
      ['payment', 'list', '--customer', 'not-a-uuid'],
      [
        'payment',
        'record',
        '--rail',
        'BOLETO',
        '--customer',
        'x',
        '--amount',
        '1',
        '--asset',
        'BRL',
        '--reference',
        'r',
      ],
    ];
    for (const args of commands) {
      const { exitCode, body } = await cambioFails(...args);
      expect(exitCode, args.join(' ')).to.equal(1);
      expect(body.code, args.join(' ')).to.equal('VALIDATION_ERROR');
      expect(body.message, args.join(' ')).to.match(/must be a UUID/);
    }
  });

  it('approves a held withdrawal named in upper case: one decision, for the withdrawal’s own workflow', async () => {
    const { services } = await stack();
    const id = await heldWithdrawal(await newCustomer(), 'upper-case@example.com');

    const approved = await cambio('withdrawal', 'approve', id.toUpperCase());
    expect(approved.stdout.trim()).to.equal(`operation ${id} is COMPLETED`);
    const rows = (await systemEm(services.orm).execute(
      'select workflow_id, decision from workflow_decisions where target = ?',
      [id],
    )) as { workflow_id: string; decision: string }[];
    expect(rows).to.deep.equal([{ workflow_id: `operation-${id}`, decision: 'APPROVE' }]);
    // A second operator, with the id as the API prints it, is told it was decided.
    expect((await cambioFails('withdrawal', 'reject', id)).body.code).to.equal('INVALID_STATE');
  });

  it('two operators deciding one review at once: one decision wins, the other is INVALID_STATE', async () => {
    const c = await newCustomer();
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    const ended = await Promise.all([
      cambio('account', 'approve', account.id).then(() => 'APPROVE', refusal),
      cambio('account', 'reject', account.id, '--reason', 'blurry').then(() => 'REJECT', refusal),
    ]);
    const won = ended.filter((e) => typeof e === 'string');
    const lost = ended.filter((e) => typeof e !== 'string') as Refusal[];
    expect(won, JSON.stringify(ended)).to.have.length(1);
    expect(lost.map((l) => [l.exitCode, l.body.code])).to.deep.equal([[1, 'INVALID_STATE']]);
    const status = (await getAccount(c, account.id)).currentState.status;
    expect(status).to.equal(won[0] === 'APPROVE' ? 'ACTIVE' : 'ACTION_REQUIRED');
    // Approving again once it is applied: the account's state, in the same words.
    const again = await cambioFails('account', 'approve', account.id);
    expect([again.exitCode, again.body.code, again.body.details.status]).to.deep.equal([1, 'INVALID_STATE', status]);
  });

  it('a decision recorded and not yet applied: the next operator is told which decision it is', async () => {
    const { services } = await stack();
    const c = await newCustomer();
    const account = await createAccount(c, { assets: ['BRL'] });
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    // The first operator's APPROVE committed; its signal waits (no relay, the writer gone before its send).
    const refused = await withoutRelay(async () => {
      await inTransaction(tenantEm(services.orm, c.customerId), (tx) =>
        recordAccountDecision(services, tx, account.id, { decision: 'APPROVE' }, who),
      );
      return cambioFails('account', 'reject', account.id, '--reason', 'blurry');
    });
    expect([refused.exitCode, refused.body.code]).to.deep.equal([1, 'INVALID_STATE']);
    expect(refused.body.details).to.deep.equal({ status: 'DECIDED', decision: 'APPROVE' });
    expect(refused.body.message).to.contain('APPROVE');
    const applied = await eventually(
      () => getAccount(c, account.id),
      (a) => a.currentState.status !== 'UNDER_REVIEW',
    );
    expect(applied.currentState.status).to.equal('ACTIVE');
  });
});

describe('operator CLI: arguments it refuses before acting', function () {
  this.timeout(120000);

  it('refuses an unknown schedule, an --older-than past ten years, a customer name over 255 characters', async () => {
    const refusals = [
      { args: ['schedule', 'pause', 'nope'], message: /no schedule "nope": one of event-purge/ },
      { args: ['schedule', 'trigger', 'nope'], message: /no schedule "nope"/ },
      { args: ['operation', 'list', '--stuck', '--older-than', '99999999999999999999'], message: /at most \d+/ },
      { args: ['customer', 'create', '--name', 'x'.repeat(256)], message: /at most 255 characters/ },
    ];
    for (const { args, message } of refusals) {
      const { exitCode, body } = await cambioFails(...args);
      expect(exitCode, args.join(' ')).to.equal(1);
      expect(body.code, args.join(' ')).to.equal('VALIDATION_ERROR');
      expect(body.message, args.join(' ')).to.match(message);
    }
    const named = JSON.parse((await cambio('customer', 'create', '--name', 'y'.repeat(255), '--json')).stdout);
    expect(named.customerId).to.match(/^[0-9a-f-]{36}$/);
  });

  it('answers a command line it cannot parse with VALIDATION_ERROR, the error line a script reads', async () => {
    const id = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
    const refusals = [
      { args: ['account', 'approve'], message: /missing required argument 'accountId'/ },
      { args: ['account', 'approve', id, '--bogus'], message: /unknown option '--bogus'/ },
      { args: ['account', 'reject', id], message: /required option '--reason <reason>' not specified/ },
      { args: ['customer', 'create', '--name'], message: /option '--name <name>' argument missing/ },
      { args: ['nonsense'], message: /unknown command 'nonsense'/ },
      { args: ['operation', 'list'], message: /one of --stuck or --held/ },
      { args: ['operation', 'list', '--stuck', '--held'], message: /one of --stuck or --held/ },
      // Who acts is what the audit row keeps: a missing name is refused, not replaced by the OS user or a flag.
      { args: ['account', 'approve', id, '--operator'], message: /--operator needs a name/ },
      { args: ['account', 'approve', id, '--operator', '--json'], message: /--operator needs a name/ },
      { args: ['account', 'approve', id, '--operator='], message: /--operator needs a name/ },
    ];
    for (const { args, message } of refusals) {
      const { exitCode, body } = await cambioFails(...args);
      expect(exitCode, args.join(' ')).to.equal(1);
      expect(body.code, args.join(' ')).to.equal('VALIDATION_ERROR');
      expect(body.message, args.join(' ')).to.match(message);
    }
    // Help is no failure: it is printed on stdout and the command ends with 0.
    const help = await cambio('account', '--help');
    expect(help.stdout).to.contain('approve');
  });
});
