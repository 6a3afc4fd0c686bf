import { randomBytes, randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type Koa from 'koa';
import { boletoCodes, brCode } from './codes';
import { BankStore, type Boleto } from './state';

// A bank's collection API in the shape of Banco Inter's Cobrança v3, for the sandbox and the tests: OAuth2 client
// credentials (`POST /oauth/v2/token`, the id and secret in the form), boletos registered under the caller's
// `seuNumero` (a repeated one is refused), read one by one and listed in pages, a webhook the bank POSTs arrays of
// changes to (with retries), cancelling, and control routes under /sim/boleto that play the payer. Served by the PSP
// simulator's process (simulator.ts mounts it); the PSP's faults (/sim/faults) apply to its paths too.

export interface BankOptions {
  stateFile: string;
  /** Client id → secret the bank knows (its own: Cambio's BOLETO_CLIENT_ID / BOLETO_CLIENT_SECRET). */
  clients: Record<string, string>;
  tokenTtlSeconds: number;
}

const BASE = '/cobranca/v3/cobrancas';
const RETRY_MS = [200, 500, 1000, 2000, 5000, 10000, 30000, 60000];
const NOTICE_TIMEOUT_MS = 5000;
const OPEN = new Set(['A_RECEBER', 'ATRASADO']);
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const brasiliaNow = () => new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 10);
const digits = (n: number) => Array.from(randomBytes(n), (b) => String(b % 10)).join('');
const money = (v: number) => v.toFixed(2);

function problem(ctx: Koa.Context, status: number, title: string, detail: string, violacoes?: unknown[]) {
  ctx.status = status;
  ctx.body = { title, detail, ...(violacoes ? { violacoes } : {}) };
}

export class BoletoBank {
  private readonly store: BankStore;
  private readonly tokens = new Map<string, number>();
  private delivering = false;

  constructor(private readonly options: BankOptions) {
    this.store = new BankStore(options.stateFile);
  }

  /** Koa middleware: the bank's paths, its control routes; anything else goes on. */
  middleware(): Koa.Middleware {
    const api = this.api();
    const control = this.control();
    const routes = api.routes() as unknown as Koa.Middleware;
    const controls = control.routes() as unknown as Koa.Middleware;
    return async (ctx, next) => {
      if (ctx.path === '/oauth/v2/token' && ctx.method === 'POST') return this.issueToken(ctx);
      if (ctx.path.startsWith('/sim/boleto')) return controls(ctx, next);
      if (!ctx.path.startsWith('/cobranca/v3/')) return next();
      const bearer = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
      const expires = bearer ? this.tokens.get(bearer) : undefined;
      if (!expires || expires < Date.now()) return problem(ctx, 401, 'Não autorizado', 'token inválido ou expirado');
      await routes(ctx, async () => problem(ctx, 404, 'Não encontrado', `${ctx.method} ${ctx.path}`));
    };
  }

  private issueToken(ctx: Koa.Context) {
    const form = (ctx.state.body ?? {}) as Record<string, string>;
    const known = form.client_id && this.options.clients[form.client_id];
    if (!known || known !== form.client_secret) {
      ctx.status = 401;
      ctx.body = { error: 'invalid_client' };
      return;
    }
    if (form.grant_type !== 'client_credentials') {
      ctx.status = 400;
      ctx.body = { error: 'unsupported_grant_type' };
      return;
    }
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, Date.now() + this.options.tokenTtlSeconds * 1000);
    ctx.body = {
      access_token: token,
      token_type: 'Bearer',
      expires_in: this.options.tokenTtlSeconds,
      scope: form.scope ?? 'boleto-cobranca.read boleto-cobranca.write',
    };
  }

  private api(): Router {
    const router = new Router();
    const s = () => this.store.state;

    router.post(BASE, (ctx) => {
      const b = (ctx.state.body ?? {}) as Record<string, unknown> & { valorNominal?: number; numDiasAgenda?: number };
      const violacoes = [];
      if (typeof b.seuNumero !== 'string' || !/^.{1,15}$/.test(b.seuNumero))
        violacoes.push({ propriedade: 'seuNumero', razao: 'de 1 a 15 caracteres' });
      if (
        typeof b.valorNominal !== 'number' ||
        !(b.valorNominal >= 2.5) ||
        Math.round(b.valorNominal * 100) !== b.valorNominal * 100
      )
        violacoes.push({ propriedade: 'valorNominal', razao: 'número de 2.50 a 99999999.99 com 2 casas' });
      if (typeof b.dataVencimento !== 'string' || !DATE.test(b.dataVencimento) || b.dataVencimento < brasiliaNow())
        violacoes.push({ propriedade: 'dataVencimento', razao: 'data YYYY-MM-DD, hoje ou depois' });
      if (
        b.numDiasAgenda !== undefined &&
        !(Number.isInteger(b.numDiasAgenda) && b.numDiasAgenda >= 0 && b.numDiasAgenda <= 60)
      )
        violacoes.push({ propriedade: 'numDiasAgenda', razao: 'de 0 a 60' });
      const p = (b.pagador ?? {}) as Record<string, unknown>;
      for (const f of ['cpfCnpj', 'tipoPessoa', 'nome', 'endereco', 'cidade', 'uf', 'cep'])
        if (typeof p[f] !== 'string' || !p[f]) violacoes.push({ propriedade: `pagador.${f}`, razao: 'obrigatório' });
      if (violacoes.length) return problem(ctx, 400, 'Requisição inválida', 'campos inválidos', violacoes);
      if (s().boletos.some((x) => x.seuNumero === b.seuNumero))
        return problem(ctx, 409, 'Requisição inválida', `já existe uma cobrança com seuNumero ${b.seuNumero}`);
      const valor = money(b.valorNominal as number);
      const seuNumero = b.seuNumero as string;
      const dataVencimento = b.dataVencimento as string;
      const codigo = randomUUID();
      const nossoNumero = digits(11);
      const codes = boletoCodes(valor, dataVencimento, `0001112${nossoNumero}${digits(7)}`);
      const txid = randomUUID().replace(/-/g, '');
      const boleto: Boleto = {
        codigoSolicitacao: codigo,
        seuNumero,
        valorNominal: valor,
        dataEmissao: brasiliaNow(),
        dataVencimento,
        situacao: 'A_RECEBER',
        dataSituacao: brasiliaNow(),
        pagador: p,
        nossoNumero,
        codigoBarras: codes.barcode,
        linhaDigitavel: codes.digitableLine,
        txid,
        pixCopiaECola: brCode(`bank.sim.example/boleto/${txid}`, valor),
      };
      s().boletos.push(boleto);
      this.store.save();
      ctx.body = { codigoSolicitacao: codigo };
    });

    router.put(`${BASE}/webhook`, (ctx) => {
      const url = (ctx.state.body as { webhookUrl?: unknown } | undefined)?.webhookUrl;
      if (typeof url !== 'string' || !/^https?:\/\//.test(url))
        return problem(ctx, 400, 'Requisição inválida', 'webhookUrl obrigatório');
      s().webhookUrl = url;
      this.store.save();
      ctx.status = 204;
    });

    router.get(`${BASE}/webhook`, (ctx) => {
      if (!s().webhookUrl) return problem(ctx, 404, 'Não encontrado', 'nenhum webhook');
      ctx.body = { webhookUrl: s().webhookUrl };
    });

    router.get(BASE, (ctx) => {
      const q = ctx.query as Record<string, string | undefined>;
      if (!q.dataInicial || !q.dataFinal || !DATE.test(q.dataInicial) || !DATE.test(q.dataFinal))
        return problem(ctx, 400, 'Requisição inválida', 'dataInicial e dataFinal obrigatórias (YYYY-MM-DD)');
      const by = q.filtrarDataPor ?? 'VENCIMENTO';
      const dateOf = (x: Boleto) =>
        by === 'EMISSAO' ? x.dataEmissao : by === 'PAGAMENTO' ? x.dataPagamento : x.dataVencimento;
      const all = s().boletos.filter((x) => {
        const d = dateOf(x);
        if (!d || d < q.dataInicial! || d > q.dataFinal!) return false;
        if (q.situacao && x.situacao !== q.situacao) return false;
        return !q.seuNumero || x.seuNumero === q.seuNumero;
      });
      const size = Math.min(Math.max(Number(q['paginacao.itensPorPagina'] ?? 100) || 100, 1), 1000);
      const page = Math.max(Number(q['paginacao.paginaAtual'] ?? 0) || 0, 0);
      const pages = Math.max(Math.ceil(all.length / size), 1);
      const items = all.slice(page * size, (page + 1) * size);
      ctx.body = {
        totalPaginas: pages,
        totalElementos: all.length,
        ultimaPagina: page + 1 >= pages,
        primeiraPagina: page === 0,
        tamanhoPagina: size,
        numeroDeElementos: items.length,
        cobrancas: items.map(present),
      };
    });

    router.get(`${BASE}/:codigo`, (ctx) => {
      const found = s().boletos.find((x) => x.codigoSolicitacao === ctx.params.codigo);
      if (!found) return problem(ctx, 404, 'Não encontrado', 'cobrança não encontrada');
      ctx.body = present(found);
    });

    router.post(`${BASE}/:codigo/cancelar`, (ctx) => {
      const found = s().boletos.find((x) => x.codigoSolicitacao === ctx.params.codigo);
      if (!found) return problem(ctx, 404, 'Não encontrado', 'cobrança não encontrada');
      const motivo = (ctx.state.body as { motivoCancelamento?: unknown } | undefined)?.motivoCancelamento;
      if (typeof motivo !== 'string' || !motivo || motivo.length > 50)
        return problem(ctx, 400, 'Requisição inválida', 'motivoCancelamento de 1 a 50 caracteres');
      if (!OPEN.has(found.situacao))
        return problem(ctx, 400, 'Requisição inválida', `cobrança ${found.situacao} não pode ser cancelada`);
      found.situacao = 'CANCELADO';
      found.dataSituacao = brasiliaNow();
      found.motivoCancelamento = motivo;
      this.enqueue(found, 1);
      this.store.save();
      ctx.status = 202;
    });
    return router;
  }

  private control(): Router {
    const router = new Router({ prefix: '/sim/boleto' });
    /**
     * The payer pays a boleto (by `seuNumero` or `codigoSolicitacao`): `valor` (default the nominal), `notices` how
     * many copies of the notice (0: only the list shows it), `force` to pay one cancelled or expired (a payment in
     * flight when it was cancelled), `dataPagamento` (YYYY-MM-DD, default today in Brasília) the day the payer paid:
     * a boleto paid by its barcode is processed by the compensation a business day or more after that day, and the
     * bank dates it by the payer's day.
     */
    router.post('/pay', (ctx) => {
      const b = (ctx.state.body ?? {}) as Record<string, unknown>;
      const found = this.store.state.boletos.find(
        (x) => x.seuNumero === b.seuNumero || x.codigoSolicitacao === b.codigoSolicitacao,
      );
      if (!found) return problem(ctx, 404, 'Não encontrado', 'cobrança não encontrada');
      // A boleto is paid once: the same payment asked again (a client's retry) is that payment.
      if (found.situacao === 'RECEBIDO') return void (ctx.body = present(found));
      if (!OPEN.has(found.situacao) && !b.force)
        return problem(ctx, 409, 'Conflito', `cobrança ${found.situacao} não recebe pagamento`);
      const valor = typeof b.valor === 'string' && /^\d+\.\d{2}$/.test(b.valor) ? b.valor : found.valorNominal;
      found.situacao = 'RECEBIDO';
      found.dataSituacao = brasiliaNow();
      found.dataPagamento =
        typeof b.dataPagamento === 'string' && DATE.test(b.dataPagamento) ? b.dataPagamento : brasiliaNow();
      found.valorTotalRecebido = valor;
      // How the payer paid, as Inter names it (its boleto or its Pix), when the payer says.
      if (typeof b.origem === 'string') found.origemRecebimento = b.origem;
      this.enqueue(found, typeof b.notices === 'number' ? b.notices : 1);
      this.store.save();
      ctx.body = present(found);
    });
    /** One boleto by our seuNumero (the sandbox route learns the bank's codigoSolicitacao of a deposit here). */
    router.get('/boletos/:seuNumero', (ctx) => {
      const found = this.store.state.boletos.find((x) => x.seuNumero === ctx.params.seuNumero);
      if (!found) return problem(ctx, 404, 'Não encontrado', 'cobrança não encontrada');
      ctx.body = present(found);
    });
    router.get('/state', (ctx) => {
      ctx.body = this.store.state;
    });
    return router;
  }

  private enqueue(boleto: Boleto, copies: number) {
    const s = this.store.state;
    if (!s.webhookUrl) return;
    const item = {
      codigoSolicitacao: boleto.codigoSolicitacao,
      seuNumero: boleto.seuNumero,
      situacao: boleto.situacao,
      dataHoraSituacao: new Date().toISOString(),
      ...(boleto.valorTotalRecebido ? { valorTotalRecebido: boleto.valorTotalRecebido } : {}),
      ...(boleto.origemRecebimento ? { origemRecebimento: boleto.origemRecebimento } : {}),
      nossoNumero: boleto.nossoNumero,
      codigoBarras: boleto.codigoBarras,
      linhaDigitavel: boleto.linhaDigitavel,
    };
    for (let i = 0; i < copies; i++) {
      s.notices.push({
        id: `${boleto.codigoSolicitacao}-${s.seq++}`,
        url: s.webhookUrl,
        body: [item],
        attempts: 0,
        nextAt: 0,
      });
    }
  }

  /** Sends due notices, one pass at a time; a receiver that answers anything but 2xx gets it again later. */
  async tick(): Promise<void> {
    if (this.delivering) return;
    this.delivering = true;
    try {
      const s = this.store.state;
      const due = s.notices.filter((n) => n.nextAt <= Date.now());
      for (const n of due) {
        let ok = false;
        try {
          const res = await fetch(n.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(n.body),
            signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
          });
          ok = res.ok;
        } catch {
          ok = false;
        }
        if (ok) {
          s.notices = s.notices.filter((x) => x !== n);
          s.delivered++;
        } else {
          n.attempts++;
          if (n.attempts > RETRY_MS.length) s.notices = s.notices.filter((x) => x !== n);
          else n.nextAt = Date.now() + RETRY_MS[n.attempts - 1];
        }
      }
      if (due.length) this.store.save();
    } finally {
      this.delivering = false;
    }
  }
}

/** A boleto as `GET /cobranca/v3/cobrancas/{codigoSolicitacao}` and the list show it. */
function present(x: Boleto) {
  return {
    cobranca: {
      codigoSolicitacao: x.codigoSolicitacao,
      seuNumero: x.seuNumero,
      dataEmissao: x.dataEmissao,
      dataVencimento: x.dataVencimento,
      valorNominal: x.valorNominal,
      tipoCobranca: 'SIMPLES',
      situacao: x.situacao,
      dataSituacao: x.dataSituacao,
      ...(x.valorTotalRecebido ? { valorTotalRecebido: x.valorTotalRecebido } : {}),
      ...(x.origemRecebimento ? { origemRecebimento: x.origemRecebimento } : {}),
      ...(x.motivoCancelamento ? { motivoCancelamento: x.motivoCancelamento } : {}),
      arquivada: false,
      pagador: x.pagador,
    },
    boleto: { nossoNumero: x.nossoNumero, codigoBarras: x.codigoBarras, linhaDigitavel: x.linhaDigitavel },
    pix: { txid: x.txid, pixCopiaECola: x.pixCopiaECola },
  };
}
