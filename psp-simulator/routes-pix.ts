import Router from '@koa/router';
import type Koa from 'koa';
import type { ValidateFunction } from 'ajv';
import { MALFORMED, problem } from './http';
import { locationId, returnId } from './ids';
import { E2E, ID_35, TXID, validate, violacoes } from './schemas';
import { fitsReturn, presentDevolucao, presentPix } from './settlement';
import type { SimulatorHandle as Simulator } from './handle';
import type { Charge } from './store';

// API Pix: immediate charges (cob), received Pix (pix), returns (devolucao) and the webhook of a key.

const MAX_PAGE = 1000;

export function pixRoutes(sim: Simulator) {
  const router = new Router();
  const state = () => sim.store.state;

  /** The body if it passes `check`; otherwise the 400 is written and undefined returned. */
  const bodyOr400 = <T>(ctx: Koa.Context, check: ValidateFunction, name = 'CobOperacaoInvalida') => {
    const body = ctx.state.body;
    if (body === MALFORMED || body === undefined) {
      problem(ctx, 400, 'RequisicaoInvalida', 'the body must be JSON');
      return undefined;
    }
    if (!check(body)) {
      problem(ctx, 400, name, 'the body does not follow the schema', violacoes(check.errors));
      return undefined;
    }
    return body as T;
  };

  const cob = (c: Charge) => ({
    calendario: { criacao: c.criacao, expiracao: c.expiracao },
    txid: c.txid,
    revisao: 0,
    loc: { id: 1, location: c.location, tipoCob: 'cob', criacao: c.criacao },
    location: c.location,
    status: c.status,
    ...(c.devedor ? { devedor: c.devedor } : {}),
    valor: { original: c.valor },
    chave: c.chave,
    ...(c.solicitacaoPagador ? { solicitacaoPagador: c.solicitacaoPagador } : {}),
  });

  router.put('/cob/:txid', async (ctx) => {
    const { txid } = ctx.params;
    if (!TXID.test(txid)) return problem(ctx, 400, 'CobOperacaoInvalida', 'txid must be 26-35 of [a-zA-Z0-9]');
    const body = bodyOr400<{
      calendario: { expiracao?: number };
      valor: { original: string };
      chave: string;
      devedor?: Record<string, string>;
      solicitacaoPagador?: string;
    }>(ctx, validate.cob);
    if (!body) return;
    if (body.valor.original === '0.00') {
      return problem(ctx, 400, 'CobOperacaoInvalida', 'invalid amount', [
        { razao: 'Valor da cobrança não pode ser 0.00', propriedade: 'valor.original' },
      ]);
    }
    if (state().charges[txid]) return problem(ctx, 409, 'CobOperacaoInvalida', `txid ${txid} is already in use`);
    const charge: Charge = await sim.store.change((s) => {
      const created: Charge = {
        txid,
        criacao: new Date().toISOString(),
        expiracao: body.calendario.expiracao ?? 86400,
        valor: body.valor.original,
        chave: body.chave,
        ...(body.devedor ? { devedor: body.devedor } : {}),
        ...(body.solicitacaoPagador ? { solicitacaoPagador: body.solicitacaoPagador } : {}),
        location: `${ctx.host}/qr/v2/${locationId()}`.slice(0, 77),
        status: 'ATIVA',
      };
      s.charges[txid] = created;
      return created;
    });
    ctx.status = 201;
    ctx.body = cob(charge);
  });

  router.get('/cob/:txid', async (ctx) => {
    const charge = state().charges[ctx.params.txid];
    if (!charge) return problem(ctx, 404, 'CobNaoEncontrado', 'no charge with this txid');
    const pix = Object.values(state().received).filter((p) => p.txid === charge.txid);
    ctx.body = { ...cob(charge), ...(pix.length ? { pix: pix.map(presentPix) } : {}) };
  });

  router.get('/pix', async (ctx) => {
    const q = ctx.query as Record<string, string | undefined>;
    const inicio = Date.parse(q.inicio ?? '');
    const fim = Date.parse(q.fim ?? '');
    const page = Number(q['paginacao.paginaAtual'] ?? 0);
    const size = Number(q['paginacao.itensPorPagina'] ?? 100);
    const bad = [];
    if (Number.isNaN(inicio)) bad.push({ razao: 'inicio is required, date-time', propriedade: 'inicio' });
    if (Number.isNaN(fim)) bad.push({ razao: 'fim is required, date-time', propriedade: 'fim' });
    if (!Number.isInteger(page) || page < 0) {
      bad.push({ razao: 'paginaAtual must be >= 0', propriedade: 'paginacao.paginaAtual' });
    }
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) {
      bad.push({ razao: `itensPorPagina must be 1-${MAX_PAGE}`, propriedade: 'paginacao.itensPorPagina' });
    }
    if (!bad.length && fim < inicio) bad.push({ razao: 'fim is before inicio', propriedade: 'fim' });
    const max = sim.maxListWindowMs;
    if (!bad.length && max !== undefined && fim - inicio > max) {
      bad.push({ razao: `the span from inicio to fim exceeds ${max / 1000} s`, propriedade: 'fim' });
    }
    if (bad.length) return problem(ctx, 400, 'ConsultaInvalida', 'invalid query', bad);
    const all = Object.values(state().received)
      .filter((p) => Date.parse(p.horario) >= inicio && Date.parse(p.horario) <= fim)
      .filter((p) => !q.txid || p.txid === q.txid)
      .sort((a, b) => a.horario.localeCompare(b.horario) || a.endToEndId.localeCompare(b.endToEndId));
    ctx.body = {
      parametros: {
        inicio: new Date(inicio).toISOString(),
        fim: new Date(fim).toISOString(),
        paginacao: {
          paginaAtual: page,
          itensPorPagina: size,
          quantidadeDePaginas: Math.max(1, Math.ceil(all.length / size)),
          quantidadeTotalDeItens: all.length,
        },
      },
      pix: all.slice(page * size, (page + 1) * size).map(presentPix),
    };
  });

  router.get('/pix/:e2eid', async (ctx) => {
    const pix = state().received[ctx.params.e2eid];
    if (!pix) return problem(ctx, 404, 'PixNaoEncontrado', 'no Pix with this e2eid');
    ctx.body = presentPix(pix);
  });

  router.put('/pix/:e2eid/devolucao/:id', async (ctx) => {
    const { e2eid, id } = ctx.params;
    if (!E2E.test(e2eid)) return problem(ctx, 400, 'PixDevolucaoInvalida', 'e2eid must be 32 of [a-zA-Z0-9]');
    if (!ID_35.test(id)) return problem(ctx, 400, 'PixDevolucaoInvalida', 'id must be 1-35 of [a-zA-Z0-9]');
    const body = bodyOr400<{ valor: string; natureza?: string; descricao?: string }>(
      ctx,
      validate.devolucao,
      'PixDevolucaoInvalida',
    );
    if (!body) return;
    const pix = state().received[e2eid];
    if (!pix) return problem(ctx, 404, 'PixNaoEncontrado', 'no Pix with this e2eid');
    if (pix.devolucoes.some((d) => d.id === id)) {
      return problem(ctx, 409, 'PixDevolucaoInvalida', `return id ${id} is already in use`);
    }
    if (!fitsReturn(pix, body.valor)) {
      return problem(ctx, 400, 'PixDevolucaoInvalida', 'the returns would exceed the Pix', [
        { razao: 'valor above what is left to return', propriedade: 'valor' },
      ]);
    }
    const rule = state().returnRules[e2eid];
    const created = await sim.store.change(() => {
      const d = {
        id,
        rtrId: returnId(),
        valor: body.valor,
        natureza: body.natureza ?? 'ORIGINAL',
        ...(body.descricao ? { descricao: body.descricao } : {}),
        horario: { solicitacao: new Date().toISOString() },
        status: 'EM_PROCESSAMENTO' as const,
        ...(rule?.motivo ? { motivo: rule.motivo } : {}),
        // A return told to stay pending has no settlement time: only the control route's settle ends it.
        ...(rule?.outcome === 'EM_PROCESSAMENTO'
          ? {}
          : { settleAt: Date.now() + sim.options.settleMs, outcome: rule?.outcome ?? ('DEVOLVIDO' as const) }),
      };
      pix.devolucoes.push(d);
      return d;
    });
    ctx.status = 201;
    ctx.body = presentDevolucao(created);
  });

  router.get('/pix/:e2eid/devolucao/:id', async (ctx) => {
    const d = state().received[ctx.params.e2eid]?.devolucoes.find((x) => x.id === ctx.params.id);
    if (!d) return problem(ctx, 404, 'DevolucaoNaoEncontrada', 'no such return');
    ctx.body = presentDevolucao(d);
  });

  router.put('/webhook/:chave', async (ctx) => {
    const body = bodyOr400<{ webhookUrl: string }>(ctx, validate.webhook, 'WebhookOperacaoInvalida');
    if (!body) return;
    const chave = ctx.params.chave;
    const hook = await sim.store.change((s) => {
      s.webhooks[chave] = { webhookUrl: body.webhookUrl, criacao: new Date().toISOString() };
      return s.webhooks[chave];
    });
    ctx.body = { webhookUrl: hook.webhookUrl, chave, criacao: hook.criacao };
  });

  router.get('/webhook/:chave', async (ctx) => {
    const hook = state().webhooks[ctx.params.chave];
    if (!hook) return problem(ctx, 404, 'WebhookNaoEncontrado', 'no webhook for this key');
    ctx.body = { webhookUrl: hook.webhookUrl, chave: ctx.params.chave, criacao: hook.criacao };
  });

  router.delete('/webhook/:chave', async (ctx) => {
    await sim.store.change((s) => delete s.webhooks[ctx.params.chave]);
    ctx.status = 204;
  });

  return router;
}
