// The audit chain holds against its own writers (decision 0069): an action and its row commit together or not at all,
// even when the CLI process is killed between them; rows edited with their hashes recomputed (without AUDIT_KEY) fail
// `verify`; rows cut off the end fail `verify --expect-head`.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { appendAudit, auditHash, auditKeyOf, AuditRow, listAudit } from '../../db/repositories/audit-log';
import { activeAccount, getAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';
import { cambio, cambioFails, cambioKilledAt } from '../helpers/cli';

const verify = async (...args: string[]) => JSON.parse((await cambio('audit', 'verify', ...args, '--json')).stdout);

/** As the database owner: the trigger off, `fn`, the trigger on again. */
async function asOwner(fn: (run: (sql: string, params?: unknown[]) => Promise<unknown>) => Promise<void>) {
  const { services } = await stack();
  await systemEm(services.orm).transactional(async (tx) => {
    await tx.execute('alter table audit_log disable trigger audit_log_append_only');
    await fn((sql, params = []) => tx.execute(sql, params));
    await tx.execute('alter table audit_log enable trigger audit_log_append_only');
  });
}

const rowsOf = async () => listAudit(systemEm((await stack()).services.orm));

describe('audit chain: one transaction, keyed, pinned', function () {
  this.timeout(120000);

  it('commits the action and its row together: killed before COMMIT neither, after COMMIT both', async () => {
    const c = await newCustomer('Killed Ltda');
    const account = await activeAccount(c, ['BRL']);
    const tagRows = async () => (await rowsOf()).filter((r) => r.action === 'account.tag' && r.target === account.id);

    await cambioKilledAt('before-commit', 'account', 'tag', account.id, '--key', 'desk', '--value', 'lost');
    expect((await getAccount(c, account.id)).tags ?? [], 'no tag').to.deep.equal([]);
    expect(await tagRows(), 'no audit row').to.deep.equal([]);

    await cambioKilledAt('after-commit', 'account', 'tag', account.id, '--key', 'desk', '--value', 'kept');
    expect((await getAccount(c, account.id)).tags).to.deep.include({ key: 'desk', value: 'kept' });
    const [row, ...more] = await tagRows();
    expect(more, 'one row').to.deep.equal([]);
    expect(row.details).to.deep.include({ key: 'desk', value: 'kept', outcome: 'OK' });
    expect((await verify()).ok).to.equal(true);
  });

  it('verifies a row whose details had a key without a value (a return under way has no end-to-end id)', async () => {
    const { services } = await stack();
    const details = { amount: { value: '10.00', asset: 'BRL' }, returnEndToEndId: undefined };
    const entry = { operator: 'test-operator', action: 'payment.return', target: 'p-1', reason: 'why', details };
    await appendAudit(systemEm(services.orm), entry, auditKeyOf(process.env.AUDIT_KEY!));
    expect((await verify()).ok).to.equal(true);
  });

  it('fails verify when a row is edited and the hashes after it recomputed without the key', async () => {
    await cambio('customer', 'create', '--name', 'Chain Edit Ltda');
    await cambio('customer', 'create', '--name', 'Chain Edit Two Ltda');
    const before = await rowsOf();
    const at = before.length - 2;

    // What whoever can write the table can do: edit, then recompute every hash after it, unkeyed.
    const rewrite = async (rows: AuditRow[], keyId: (r: AuditRow) => string | null) =>
      asOwner(async (run) => {
        let prev = rows[at - 1]?.hash ?? '';
        for (const r of rows.slice(at)) {
          const hash = auditHash(prev, r, null);
          await run('update audit_log set operator = ?, prev_hash = ?, hash = ?, key_id = ? where id = ?', [
            r.operator,
            prev,
            hash,
            keyId(r),
            r.id,
          ]);
          prev = hash;
        }
      });
    const edited = before.map((r, i) => (i === at ? { ...r, operator: 'mallory' } : r));

    await rewrite(edited, (r) => r.keyId);
    const keyed = await cambioFails('audit', 'verify');
    expect(keyed.body.details.id).to.equal(before[at].id);
    expect(keyed.body.message).to.contain('keyed hash');

    // Passing the rows off as written before the chain was keyed does not help either.
    await rewrite(edited, () => null);
    const unkeyed = await cambioFails('audit', 'verify');
    expect(unkeyed.body.details.id).to.equal(before[at].id);
    expect(unkeyed.body.message).to.contain('before the chain was keyed');

    // Put the rows back as they were, so later runs of verify in this database hold again.
    await asOwner(async (run) => {
      for (const r of before.slice(at)) {
        await run('update audit_log set operator = ?, prev_hash = ?, hash = ?, key_id = ? where id = ?', [
          r.operator,
          r.prevHash,
          r.hash,
          r.keyId,
          r.id,
        ]);
      }
    });
    expect((await verify()).ok).to.equal(true);
  });

  it('prints the row count and head; --expect-head fails once rows up to that head were cut off the end', async () => {
    await cambio('customer', 'create', '--name', 'Head Ltda');
    const noted = await verify();
    const rows = await rowsOf();
    expect(noted).to.deep.include({ ok: true, rows: rows.length, head: rows[rows.length - 1].hash });
    expect((await cambio('audit', 'verify')).stdout).to.contain(`${rows.length} rows, head ${noted.head}`);

    await cambio('customer', 'create', '--name', 'Head Two Ltda');
    expect((await verify('--expect-head', noted.head)).ok, 'a later head still holds the noted one').to.equal(true);

    // The owner deletes the last two rows: the chain that is left is consistent, but the noted head is gone.
    const last = (await rowsOf()).slice(-2);
    await asOwner(async (run) => {
      await run('delete from audit_log where id in (?, ?)', [last[0].id, last[1].id]);
    });
    expect((await verify()).rows, 'without a pin the cut goes unnoticed').to.equal(rows.length - 1);
    const cut = await cambioFails('audit', 'verify', '--expect-head', noted.head);
    expect(cut.exitCode).to.equal(1);
    expect(cut.body.message).to.contain('cut off the end');
  });
});
