import Router from '@koa/router';
import { MALFORMED, problem } from './http';
import { endToEndId } from './ids';
import { ID_35, validate, violacoes } from './schemas';
import type { SimulatorHandle as Simulator } from './handle';
import type { Payout } from './store';

// Payouts ("envio de Pix"): API Pix has none, so this is the shape most Brazilian PSPs deploy (Efí's):
// PUT /v3/gn/pix/{idEnvio} takes it as EM_PROCESSAMENTO; GET /v2/gn/pix/enviados/id-envio/{idEnvio} reads it until
// REALIZADO or NAO_REALIZADO. The idEnvio is the caller's: the same id twice is one payout (409 the second time).

export function payoutRoutes(sim: Simulator) {
  const router = new Router();

  const present = (p: Payout) => ({
    endToEndId: p.e2eId,
    e2eId: p.e2eId,
    idEnvio: p.idEnvio,
    valor: p.valor,
    status: p.status,
    horario: p.horario,
    pagador: p.pagador,
    favorecido: p.favorecido,
    ...(p.motivo && p.status === 'NAO_REALIZADO' ? { motivo: p.motivo } : {}),
  });

  router.put('/v3/gn/pix/:idEnvio', async (ctx) => {
    const { idEnvio } = ctx.params;
    if (!ID_35.test(idEnvio)) return problem(ctx, 400, 'EnvioInvalido', 'idEnvio must be 1-35 of [a-zA-Z0-9]');
    const body = ctx.state.body;
    if (body === MALFORMED || body === undefined) return problem(ctx, 400, 'EnvioInvalido', 'the body must be JSON');
    if (!validate.envio(body)) {
      return problem(
        ctx,
        400,
        'EnvioInvalido',
        'the body does not follow the schema',
        violacoes(validate.envio.errors),
      );
    }
    const b = body as { valor: string; pagador: Payout['pagador']; favorecido: { chave: string } };
    if (Number(b.valor) <= 0) return problem(ctx, 400, 'EnvioInvalido', 'valor must be above 0.00');
    if (sim.store.state.payouts[idEnvio]) {
      return problem(ctx, 409, 'IdEnvioJaUtilizado', `idEnvio ${idEnvio} was already used`);
    }
    const rule = sim.store.state.payoutRules[b.favorecido.chave];
    const outcome = rule?.outcome ?? 'REALIZADO';
    const payout = await sim.store.change((s) => {
      const created: Payout = {
        idEnvio,
        e2eId: endToEndId(),
        valor: b.valor,
        pagador: b.pagador,
        favorecido: b.favorecido,
        status: 'EM_PROCESSAMENTO',
        horario: { solicitacao: new Date().toISOString() },
        ...(rule?.motivo ? { motivo: rule.motivo } : {}),
        // A payout told to stay pending has no settlement time: only POST /sim/payouts/{idEnvio}/settle ends it.
        ...(outcome === 'EM_PROCESSAMENTO' ? {} : { settleAt: Date.now() + sim.options.settleMs, outcome }),
      };
      s.payouts[idEnvio] = created;
      return created;
    });
    ctx.status = 201;
    ctx.body = {
      idEnvio,
      e2eId: payout.e2eId,
      valor: payout.valor,
      horario: { solicitacao: payout.horario.solicitacao },
      status: payout.status,
    };
  });

  router.get('/v2/gn/pix/enviados/id-envio/:idEnvio', async (ctx) => {
    const payout = sim.store.state.payouts[ctx.params.idEnvio];
    if (!payout) return problem(ctx, 404, 'EnvioNaoEncontrado', 'no payout with this idEnvio');
    ctx.body = present(payout);
  });

  return router;
}
