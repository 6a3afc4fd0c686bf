import Router from '@koa/router';
import type Koa from 'koa';
import { MALFORMED, problem } from './http';
import { endToEndId, returnId, tail } from './ids';
import { arrive, fitsReturn, presentPix } from './settlement';
import type { SimulatorHandle as Simulator } from './handle';
import type { PayoutStatus, ScheduledPayment } from './store';

// The sandbox's hands on the "bank": pay a charge (now or later, with one, two or no notices), decide how payouts
// and returns end, and make the API fail or hang for a while. No auth: the simulator is a local test double and
// binds loopback unless told otherwise.

const PAYOUT_OUTCOMES: PayoutStatus[] = ['REALIZADO', 'NAO_REALIZADO', 'EM_PROCESSAMENTO'];

export function controlRoutes(sim: Simulator) {
  const router = new Router({ prefix: '/sim' });
  const body = (ctx: Koa.Context) =>
    (ctx.state.body === MALFORMED || ctx.state.body === undefined ? {} : ctx.state.body) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

  /** Pays: `{txid?, valor?, chave?, pagador?, infoPagador?, delayMs?, notices? (0-3), endToEndId?}`. */
  router.post('/pix', async (ctx) => {
    const b = body(ctx);
    const txid = str(b.txid);
    const charge = txid ? sim.store.state.charges[txid] : undefined;
    const valor = str(b.valor) ?? charge?.valor;
    const chave = str(b.chave) ?? charge?.chave ?? Object.keys(sim.store.state.webhooks)[0];
    if (!valor || !/^\d{1,10}\.\d{2}$/.test(valor))
      return problem(ctx, 400, 'Invalido', 'valor is required, as API Pix writes it (\\d{1,10}\\.\\d{2})');
    if (!chave) return problem(ctx, 400, 'Invalido', 'chave is required when no charge or webhook names one');
    const e2e = str(b.endToEndId) ?? endToEndId();
    if (sim.store.state.received[e2e]) return problem(ctx, 409, 'Invalido', `endToEndId ${e2e} already received`);
    const notices = typeof b.notices === 'number' ? Math.max(0, Math.min(3, Math.floor(b.notices))) : 1;
    const delayMs = typeof b.delayMs === 'number' ? Math.max(0, b.delayMs) : 0;
    const payment: ScheduledPayment = {
      endToEndId: e2e,
      dueAt: Date.now() + delayMs,
      notices,
      pix: {
        endToEndId: e2e,
        ...(txid ? { txid } : {}),
        valor,
        chave,
        ...(b.pagador && typeof b.pagador === 'object' ? { pagador: b.pagador as Record<string, string> } : {}),
        ...(str(b.infoPagador) ? { infoPagador: str(b.infoPagador) } : {}),
      },
    };
    if (delayMs === 0) {
      const pix = await sim.store.change((s) => arrive(s, payment));
      ctx.status = 201;
      ctx.body = presentPix(pix);
      return;
    }
    await sim.store.change((s) => void s.scheduled.push(payment));
    ctx.status = 202;
    ctx.body = { endToEndId: e2e, dueAt: new Date(payment.dueAt).toISOString() };
  });

  /** How payouts to a key end: `{chave, status: REALIZADO | NAO_REALIZADO | EM_PROCESSAMENTO, motivo?}`. */
  router.post('/payout-rules', async (ctx) => {
    const b = body(ctx);
    const chave = str(b.chave);
    const outcome = b.status as PayoutStatus;
    if (!chave || !PAYOUT_OUTCOMES.includes(outcome)) {
      return problem(ctx, 400, 'Invalido', `chave and status (${PAYOUT_OUTCOMES.join(', ')}) are required`);
    }
    await sim.store.change(
      (s) => (s.payoutRules[chave] = { outcome, ...(str(b.motivo) ? { motivo: str(b.motivo) } : {}) }),
    );
    ctx.status = 204;
  });

  /** Ends a payout that was left pending: `{status: REALIZADO | NAO_REALIZADO, motivo?}`. */
  router.post('/payouts/:idEnvio/settle', async (ctx) => {
    const b = body(ctx);
    const payout = sim.store.state.payouts[ctx.params.idEnvio];
    if (!payout) return problem(ctx, 404, 'EnvioNaoEncontrado', 'no such payout');
    if (b.status !== 'REALIZADO' && b.status !== 'NAO_REALIZADO') {
      return problem(ctx, 400, 'Invalido', 'status is REALIZADO or NAO_REALIZADO');
    }
    const status = b.status;
    await sim.store.change(() => {
      payout.outcome = status;
      payout.settleAt = Date.now();
      if (str(b.motivo)) payout.motivo = str(b.motivo);
    });
    ctx.status = 204;
  });

  /** How returns of a Pix end: `{endToEndId, status: DEVOLVIDO | NAO_REALIZADO | EM_PROCESSAMENTO, motivo?}`. */
  router.post('/return-rules', async (ctx) => {
    const b = body(ctx);
    const e2e = str(b.endToEndId);
    if (!e2e || (b.status !== 'DEVOLVIDO' && b.status !== 'NAO_REALIZADO' && b.status !== 'EM_PROCESSAMENTO')) {
      return problem(
        ctx,
        400,
        'Invalido',
        'endToEndId and status (DEVOLVIDO, NAO_REALIZADO, EM_PROCESSAMENTO) are required',
      );
    }
    const outcome = b.status;
    await sim.store.change(
      (s) => (s.returnRules[e2e] = { outcome, ...(str(b.motivo) ? { motivo: str(b.motivo) } : {}) }),
    );
    ctx.status = 204;
  });

  /**
   * A return the PSP makes itself, not asked through the API (a MED return after a fraud claim, one keyed in at its
   * portal): `{valor?, natureza?}`, the whole Pix by default. It is DEVOLVIDO after the settle delay, and the Pix's
   * notice goes out with it, as for any return.
   */
  router.post('/pix/:e2eid/med-return', async (ctx) => {
    const b = body(ctx);
    const pix = sim.store.state.received[ctx.params.e2eid];
    if (!pix) return problem(ctx, 404, 'NaoEncontrado', 'no such Pix');
    const valor = str(b.valor) ?? pix.valor;
    if (!/^\d{1,10}\.\d{2}$/.test(valor)) return problem(ctx, 400, 'Invalido', 'valor as API Pix writes it');
    if (!fitsReturn(pix, valor)) {
      return problem(ctx, 400, 'Invalido', 'valor above what is left of the Pix to return');
    }
    const created = await sim.store.change(() => {
      const d = {
        id: `MED${tail(20)}`,
        rtrId: returnId(),
        valor,
        natureza: str(b.natureza) ?? 'MED_OPERACIONAL',
        horario: { solicitacao: new Date().toISOString() },
        status: 'EM_PROCESSAMENTO' as const,
        settleAt: Date.now() + sim.options.settleMs,
        outcome: 'DEVOLVIDO' as const,
      };
      pix.devolucoes.push(d);
      return d;
    });
    ctx.status = 201;
    ctx.body = { id: created.id, rtrId: created.rtrId, valor: created.valor, natureza: created.natureza };
  });

  /** Ends a return that was left pending: `{status: DEVOLVIDO | NAO_REALIZADO, motivo?}`. */
  router.post('/pix/:e2eid/devolucao/:id/settle', async (ctx) => {
    const b = body(ctx);
    const d = sim.store.state.received[ctx.params.e2eid]?.devolucoes.find((x) => x.id === ctx.params.id);
    if (!d) return problem(ctx, 404, 'NaoEncontrado', 'no such return');
    if (b.status !== 'DEVOLVIDO' && b.status !== 'NAO_REALIZADO') {
      return problem(ctx, 400, 'Invalido', 'status is DEVOLVIDO or NAO_REALIZADO');
    }
    const status = b.status;
    await sim.store.change(() => {
      d.outcome = status;
      d.settleAt = Date.now();
      if (str(b.motivo)) d.motivo = str(b.motivo);
    });
    ctx.status = 204;
  });

  /**
   * Removes a charge: `{by: PSP | USUARIO_RECEBEDOR}` (PSP when absent). Its status becomes API Pix's
   * REMOVIDA_PELO_PSP or REMOVIDA_PELO_USUARIO_RECEBEDOR, as a PSP's own removal or the receiver's PATCH leaves it.
   */
  router.post('/cob/:txid/remove', async (ctx) => {
    const b = body(ctx);
    const charge = sim.store.state.charges[ctx.params.txid];
    if (!charge) return problem(ctx, 404, 'NaoEncontrado', 'no charge with this txid');
    if (b.by !== undefined && b.by !== 'PSP' && b.by !== 'USUARIO_RECEBEDOR') {
      return problem(ctx, 400, 'Invalido', 'by is PSP or USUARIO_RECEBEDOR');
    }
    const status = b.by === 'USUARIO_RECEBEDOR' ? 'REMOVIDA_PELO_USUARIO_RECEBEDOR' : 'REMOVIDA_PELO_PSP';
    await sim.store.change(() => void (charge.status = status));
    ctx.status = 204;
  });

  /** Bounds `GET /pix`: `{maxSeconds}` the longest inicio-fim span it lists (a 400 beyond); none or 0: unbounded. */
  router.post('/pix-list-window', async (ctx) => {
    const max = body(ctx).maxSeconds;
    sim.maxListWindowMs = typeof max === 'number' && max > 0 ? max * 1000 : undefined;
    ctx.status = 204;
  });

  /**
   * Faults on the API Pix routes: `{status?, body?, hangMs?, afterHandling?, method?, pathPrefix?, count?, forMs?}`.
   * `afterHandling`: the request is handled (and stored), then the answer hangs: the caller's timeout fires
   * after the PSP took the request; with `status` it is then answered `status` and `body` (202 and no body, 201
   * and a status the caller does not know). Without `afterHandling`, nothing is handled: `status` with `body` (or
   * a problem) is the whole answer.
   */
  router.post('/faults', async (ctx) => {
    const b = body(ctx);
    const num = (v: unknown) => (typeof v === 'number' && v >= 0 ? v : undefined);
    sim.faults.push({
      ...(str(b.method) ? { method: str(b.method) } : {}),
      ...(str(b.pathPrefix) ? { pathPrefix: str(b.pathPrefix) } : {}),
      ...(num(b.status) ? { status: num(b.status) } : {}),
      ...(b.body !== undefined ? { body: b.body } : {}),
      ...(num(b.hangMs) ? { hangMs: num(b.hangMs) } : {}),
      afterHandling: b.afterHandling === true,
      remaining: num(b.count) ?? Number.POSITIVE_INFINITY,
      until: Date.now() + (num(b.forMs) ?? 24 * 3600 * 1000),
    });
    ctx.status = 204;
  });

  router.delete('/faults', async (ctx) => {
    sim.faults = [];
    ctx.status = 204;
  });

  /** Every access token stops working: the next call gets 401 and must fetch a new one. */
  router.post('/tokens/revoke', async (ctx) => {
    sim.tokens.clear();
    ctx.status = 204;
  });

  /** What the "bank" holds, for tests and for a curious developer. */
  router.get('/state', async (ctx) => {
    const s = sim.store.state;
    ctx.body = {
      tokensIssued: sim.tokensIssued,
      charges: s.charges,
      received: Object.values(s.received).map(presentPix),
      payouts: s.payouts,
      webhooks: s.webhooks,
      pendingNotices: s.notices,
      delivered: s.delivered,
    };
  });

  return router;
}
