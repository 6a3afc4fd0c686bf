// A return leaves through the rail the payment came in on (../shared/spec/decisions.md, "A claim is not money";
// decision 0110). Through the operator CLI, as an operator runs it: a PIX payment goes back through the PSP; a CLI with
// no PSP configured refuses (RAIL_NOT_CONFIGURED) and sends nothing, unless the operator states the money went back at
// the bank (`--outside --reference REF`, audited); a return in flight at the PSP completes only on its answer, whatever
// a CLI without the PSP is asked.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { suspenseAccountId } from '../../domain/postings';
import { paymentReturnWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { activityEnded } from '../helpers/histories';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { assertLedgerBalanced } from '../helpers/money';
import { cambio, cambioFails, cambioWith } from '../helpers/cli';
import { eventually, newCustomer, simulatorEnv, stack, type TestCustomer } from '../helpers/stack';

interface Returned {
  endToEndId: string | null;
  reason: string | null;
  failure: string | null;
}
interface Payment {
  id: string;
  status: string;
  endToEndId: string;
  returned: Returned | null;
}

describe('cambio payment return: through the rail the payment came in on', function () {
  // Several CLI processes per test: each takes seconds on a loaded machine.
  this.timeout(240000);

  const json = async (...args: string[]) => JSON.parse((await cambio(...args, '--json')).stdout);

  /** The customer's view of a payment (GET /api/inbound-payments/{id}). */
  async function seen(c: TestCustomer, id: string): Promise<Payment> {
    const { http } = await stack();
    const res = await http.get(`/api/inbound-payments/${id}`).set(c.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  }

  async function suspense(customerId: string): Promise<string> {
    const { services } = await stack();
    const sql = `select coalesce(sum(available), 0)::numeric(38,2)::text as s from balances where account_id = ?`;
    return (await systemEm(services.orm).execute(sql, [suspenseAccountId(customerId)]))[0].s;
  }

  /** The returns the PSP holds for a payment (its own record, GET /sim/state). */
  async function returnsAtPsp(endToEndId: string): Promise<Array<{ id: string; rtrId: string; status: string }>> {
    const state = (await (await stack()).psp.control('GET', '/state')).body;
    const pix = state.received.find((p: { endToEndId: string }) => p.endToEndId === endToEndId);
    expect(pix, 'the PSP received the payment').to.not.equal(undefined);
    return pix.devolucoes ?? [];
  }

  async function auditOf(target: string) {
    const { services } = await stack();
    return (await systemEm(services.orm).execute(
      `select details from audit_log where action = 'payment.return' and target = ? order by at`,
      [target],
    )) as Array<{ details: Record<string, unknown> }>;
  }

  /** A Pix paid twice for one deposit (through the simulated PSP): the second is UNMATCHED in the suspense. */
  async function unmatchedPix(name: string) {
    const c = await newCustomer(name);
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '10.00');
    const first = await pay(c, dep.id, '10.00');
    const extra = await pay(c, dep.id, '10.00');
    expect([first.body.status, extra.body.status]).to.deep.equal(['MATCHED', 'UNMATCHED']);
    expect(extra.body.rail).to.equal('PIX_KEY');
    return { c, payment: extra.body as Payment };
  }

  it('no PSP: a PIX return is refused, nothing sent; --outside --reference records one made at the bank', async () => {
    const { c, payment } = await unmatchedPix('Return Rail Ltda');
    expect(await suspense(c.customerId)).to.equal('10.00');

    // This CLI has no PIX_PSP_URL: it refuses rather than take the bank path with an end-to-end id of its own making.
    const refused = await cambioFails('payment', 'return', payment.id, '--reason', 'paid twice');
    expect([refused.exitCode, refused.body.code]).to.deep.equal([1, 'RAIL_NOT_CONFIGURED']);
    expect(refused.body.message).to.include('--outside --reference');
    expect(await seen(c, payment.id)).to.deep.include({ status: 'UNMATCHED', returned: null });
    expect(await suspense(c.customerId)).to.equal('10.00');
    expect(await returnsAtPsp(payment.endToEndId), 'nothing asked of the PSP').to.deep.equal([]);

    // --outside needs the bank's reference, and the reference needs --outside.
    const noRef = await cambioFails('payment', 'return', payment.id, '--reason', 'paid twice', '--outside');
    expect(noRef.body.code).to.equal('VALIDATION_ERROR');
    const noOutside = await cambioFails('payment', 'return', payment.id, '--reason', 'x', '--reference', 'BANK-1');
    expect(noOutside.body.code).to.equal('VALIDATION_ERROR');
    expect((await seen(c, payment.id)).status).to.equal('UNMATCHED');

    // The operator states the money went back at the bank: RETURNED with the bank's reference, nothing at the PSP.
    const reference = `BANK-${payment.id.slice(0, 8)}`;
    const args = ['payment', 'return', payment.id, '--reason', 'paid twice', '--outside', '--reference', reference];
    const returned = await json(...args);
    expect(returned).to.deep.include({ id: payment.id, status: 'RETURNED' });
    expect(returned.returned).to.deep.equal({ endToEndId: reference, reason: 'paid twice', failure: null });
    expect(await seen(c, payment.id)).to.deep.include({ status: 'RETURNED' });
    expect(await suspense(c.customerId)).to.equal('0.00');
    expect(await returnsAtPsp(payment.endToEndId)).to.deep.equal([]);
    // Run again: nothing more goes out.
    expect((await cambioFails(...args)).body.code).to.equal('INVALID_STATE');
    expect(await suspense(c.customerId)).to.equal('0.00');

    // Audited: the refusal with its code, the statement with its reference.
    const rows = await auditOf(payment.id);
    expect(rows.map((r) => r.details.outcome)).to.deep.equal([
      'RAIL_NOT_CONFIGURED',
      'VALIDATION_ERROR',
      'VALIDATION_ERROR',
      'OK',
      'INVALID_STATE',
    ]);
    expect(rows[3].details).to.deep.include({ outside: true, reference, returnEndToEndId: reference });
    await assertLedgerBalanced();
  });

  it('a return in flight at the PSP completes only on its answer, whatever a CLI without a PSP asks', async () => {
    const { psp } = await stack();
    const { c, payment } = await unmatchedPix('Return In Flight Ltda');
    // The PSP does not answer the return for now: it stays in flight, RETURNING under our return id.
    const pathPrefix = `/pix/${payment.endToEndId}/devolucao`;
    expect(
      (await psp.control('POST', '/faults', { method: 'PUT', pathPrefix, status: 503, forMs: 120000 })).status,
    ).to.equal(204);
    try {
      const asked = JSON.parse(
        (await cambioWith(simulatorEnv(), 'payment', 'return', payment.id, '--reason', 'unknown payer', '--json'))
          .stdout,
      );
      expect(asked).to.deep.include({ id: payment.id, status: 'RETURNING' });

      // A CLI without PIX_PSP_URL must not complete it at once with an end-to-end id of its own making.
      const again = await json('payment', 'return', payment.id, '--reason', 'unknown payer');
      expect(again).to.deep.include({ id: payment.id, status: 'RETURNING' });
      const outside = await cambioFails(
        ...['payment', 'return', payment.id, '--reason', 'x', '--outside', '--reference', 'BANK-2'],
      );
      expect(outside.body.code).to.equal('INVALID_STATE');
      expect(await seen(c, payment.id)).to.deep.include({ status: 'RETURNING' });
      expect(await suspense(c.customerId), 'still in the suspense').to.equal('10.00');
    } finally {
      await psp.control('DELETE', '/faults');
    }

    // The PSP takes the return and answers DEVOLVIDO: RETURNED with the PSP's return id.
    const done = await eventually(
      () => seen(c, payment.id),
      (p) => p.status === 'RETURNED',
      90000,
      250,
    );
    const devolucoes = await returnsAtPsp(payment.endToEndId);
    expect(devolucoes.map((d) => d.status)).to.deep.equal(['DEVOLVIDO']);
    expect(done.returned).to.deep.equal({ endToEndId: devolucoes[0].rtrId, reason: 'unknown payer', failure: null });
    expect(await suspense(c.customerId)).to.equal('0.00');
    await assertLedgerBalanced();
  });

  // The second answer: a refusal (decision 0159), or a 200 "not made" (decision 0327).
  for (const [answered, second] of [
    ['a 4xx', { status: 422 }],
    ['NAO_REALIZADO', { status: 200, body: { status: 'NAO_REALIZADO', motivo: 'recusada' } }],
  ] as const)
    it(`${answered} to a retried return, after one the PSP took: RETURNING, then RETURNED once`, async () => {
      const { psp, services } = await stack();
      const { c, payment } = await unmatchedPix('Return Retried Ltda');
      // The PSP keeps the return pending (no notice settles it) until the test settles it.
      await psp.control('POST', '/return-rules', { endToEndId: payment.endToEndId, status: 'EM_PROCESSAMENTO' });
      // The return's first attempt: the PSP takes the PUT but answers 503, and its read side does not show it yet
      // (404), so the activity is retried. Its second: the PSP refuses the repeated id (422) or answers it "not made",
      // still showing nothing. Neither is a final answer: the first PUT may send the money back.
      const pathPrefix = `/pix/${payment.endToEndId}/devolucao`;
      for (const fault of [
        { method: 'PUT', pathPrefix, afterHandling: true, status: 503, count: 1 },
        { method: 'GET', pathPrefix, status: 404, count: 2 },
        { method: 'PUT', pathPrefix, ...second, count: 1 },
      ]) {
        expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
      }
      const asked = JSON.parse(
        (await cambioWith(simulatorEnv(), 'payment', 'return', payment.id, '--reason', 'paid twice', '--json')).stdout,
      );
      expect(asked).to.deep.include({ id: payment.id, status: 'RETURNING' });
      const [taken] = await eventually(
        () => returnsAtPsp(payment.endToEndId),
        (returns) => returns.length === 1,
        30000,
      );
      const handle = services.temporal.workflow.getHandle(paymentReturnWorkflowId(taken.id));
      const send = await eventually(
        () => activityEnded(handle, 'railReturnPayment'),
        (ended) => ended !== undefined,
        30000,
      );
      expect(send, 'the refusal of the retried PUT is retried, not final').to.equal('COMPLETED');
      expect(await seen(c, payment.id)).to.deep.include({ status: 'RETURNING' });
      expect(await suspense(c.customerId), 'still in the suspense').to.equal('10.00');

      const settled = await psp.control('POST', `/pix/${payment.endToEndId}/devolucao/${taken.id}/settle`, {
        status: 'DEVOLVIDO',
      });
      expect(settled.status).to.equal(204);
      const done = await eventually(
        () => seen(c, payment.id),
        (p) => p.status !== 'RETURNING',
        90000,
        250,
      );
      const devolucoes = await returnsAtPsp(payment.endToEndId);
      expect(devolucoes.map((d) => d.status)).to.deep.equal(['DEVOLVIDO']);
      expect(done).to.deep.include({ status: 'RETURNED' });
      expect(done.returned).to.deep.equal({ endToEndId: devolucoes[0].rtrId, reason: 'paid twice', failure: null });
      expect(await suspense(c.customerId)).to.equal('0.00');
      await assertLedgerBalanced();
    });
});
