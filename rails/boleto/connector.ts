import { createHash, timingSafeEqual } from 'node:crypto';
import { NoticeRejectedError, RailRejectedError, RailUnavailableError } from '../errors';
import type {
  ChargeCapability,
  ChargeCreated,
  ChargeRequest,
  ListingCapability,
  NoticeCapability,
  NoticeVerdict,
  RailConnector,
  ReceivedPayment,
  SandboxPayerCapability,
  TimeWindow,
} from '../rail';
import type { BankResponse, BoletoClient } from './client';
import { boletoCodeProblems } from './codes';
import { boletoDueDate } from './due-date';
import { seuNumeroFor } from './ids';
import { bankAmount, isBoletoRecord, parseBoletoNotice, RECEIVED, type BoletoRecord } from './records';

// The BOLETO connector: Cambio's rail boundary spoken as Banco Inter's Cobrança v3 ("bolepix": a registered boleto
// that also carries a Pix QR). A charge is registered under our `seuNumero`, read back for its codes and checked
// before the deposit answers; a notice is read back boleto by boleto; the list finds what no notice brought; a
// deposit whose window closed unpaid has its boleto cancelled (payments/charge-cancel.ts asks, from an activity).

export const BOLETO_RAIL = 'BOLETO';
export const BOLETO_ASSET = 'BRL';

const BASE = '/cobranca/v3/cobrancas';
const PAGE_SIZE = 100;
// A boleto found again by its seuNumero was issued at most this long ago (a deposit's retry within its idempotency
// day, a cancel at the end of its window): the list the lookup reads spans this many days of issue dates.
const LOOKUP_DAYS = 30;
const DAY_MS = 86_400_000;
// Situations after which a boleto takes no payment: nothing to cancel.
const CLOSED = new Set(['CANCELADO', 'EXPIRADO', 'FALHA_EMISSAO']);
const PAID = new Set([RECEIVED, 'MARCADO_RECEBIDO']);

export interface BoletoRailOptions {
  /** BOLETO_WEBHOOK_TOKEN: the secret part of the notice URL. */
  webhookToken: string;
  /** The payer's address when the account owner's is not one the bank takes (BOLETO_PAYER_*). */
  payerAddress: { endereco: string; cidade: string; uf: string; cep: string };
  /** The clock (tests): today's date decides the due date. */
  now?: () => Date;
  /** In sandbox: the simulated bank's payer of deposits (./sandbox-payer.ts). */
  sandbox?: SandboxPayerCapability;
}

/** What became of a boleto Cambio asked to cancel. */
export type CancelOutcome = 'CANCELLED' | 'ALREADY_CLOSED' | 'PAID' | 'NOT_FOUND';

export class BoletoRail implements RailConnector, ChargeCapability, NoticeCapability, ListingCapability {
  readonly rail = BOLETO_RAIL;
  readonly charges = this;
  readonly notices = this;
  readonly listing = this;
  readonly sandbox?: SandboxPayerCapability;

  constructor(
    private readonly client: BoletoClient,
    private readonly options: BoletoRailOptions,
  ) {
    this.sandbox = options.sandbox;
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** The seuNumero a boleto registered for our charge id carries: what its cancel names. */
  chargeIdFor(chargeId: string): string {
    return seuNumeroFor(chargeId);
  }

  /**
   * Registers the deposit's boleto under its seuNumero (or finds the one an earlier try registered: the bank refuses
   * a repeated seuNumero, or a try died before it read the answer), reads its codes, and checks them against the
   * amount and due date before anyone is shown them. Codes that do not agree are RailUnavailableError: the deposit
   * is not opened (503), and the bank's error is in the log.
   */
  async createCharge(request: ChargeRequest, timeoutMs?: number): Promise<ChargeCreated> {
    const seuNumero = seuNumeroFor(request.chargeId);
    const now = this.now();
    const dueDate = boletoDueDate(now, new Date(now.getTime() + request.expiresInSeconds * 1000));
    const res = await this.client.request('POST', BASE, {
      body: {
        seuNumero,
        valorNominal: Number(request.amount),
        dataVencimento: dueDate,
        numDiasAgenda: 0,
        pagador: this.payer(request.debtor),
        ...(request.description ? { mensagem: { linha1: request.description.slice(0, 78) } } : {}),
      },
      timeoutMs,
    });
    let codigo = (res.body as { codigoSolicitacao?: string } | undefined)?.codigoSolicitacao;
    if (res.status >= 300 || !codigo) {
      // A refusal may be the bank's duplicate check: the boleto an earlier try registered is ours.
      codigo = (await this.findBySeuNumero(seuNumero, timeoutMs))?.cobranca.codigoSolicitacao;
      // A duplicate (409) or an answer without an id, and no boleto listed: one is registered under our seuNumero,
      // only this request's earlier try could have, and the bank does not list it yet. Not now (docs/decisions/0189).
      if (!codigo && (res.status === 409 || res.status < 300)) {
        throw new RailUnavailableError(`the bank holds boleto ${seuNumero} (HTTP ${res.status}) but does not list it`);
      }
      if (!codigo) throw rejected(`POST ${BASE}`, res);
    }
    const record = await this.read(codigo, timeoutMs);
    if (!record) throw new RailUnavailableError(`the bank does not show boleto ${codigo} it just registered`);
    const shownAs = record.cobranca.seuNumero;
    if (shownAs !== undefined && shownAs !== seuNumero) {
      throw new RailUnavailableError(`the bank shows boleto ${codigo} under seuNumero ${shownAs}, not ${seuNumero}`);
    }
    // Read back by a retry, it may be paid already (the owner's bank lists it to the owner) or cancelled: it takes no
    // payment, so no deposit is opened on it, for good (the seuNumero is the key's), as a PIX charge (decision 0329).
    const situation = record.cobranca.situacao;
    if (CLOSED.has(situation) || PAID.has(situation)) throw unpayable(seuNumero, record);
    return this.funding(record, seuNumero, request.amount);
  }

  private funding(record: BoletoRecord, seuNumero: string, amount: string): ChargeCreated {
    const { cobranca, boleto, pix } = record;
    const barcode = boleto?.codigoBarras ?? '';
    const digitableLine = boleto?.linhaDigitavel ?? '';
    const dueDate = cobranca.dataVencimento ?? '';
    if (!barcode || !digitableLine || !/^\d{4}-\d{2}-\d{2}$/.test(dueDate)) {
      // Inter may answer EM_PROCESSAMENTO before the codes exist: the client's retry reads them.
      throw new RailUnavailableError(`boleto ${cobranca.codigoSolicitacao} has no codes yet (${cobranca.situacao})`, 1);
    }
    if (bankAmount(cobranca.valorNominal) !== amount) {
      throw new RailRejectedError(`boleto ${cobranca.seuNumero} holds another amount`, 409, record);
    }
    const problems = boletoCodeProblems({ barcode, digitableLine }, { amount, dueDate });
    if (problems.length) {
      throw new RailUnavailableError(
        `the bank's codes of boleto ${cobranca.codigoSolicitacao}: ${problems.join('; ')}`,
      );
    }
    return {
      chargeId: seuNumero,
      expiresAt: `${dueDate}T23:59:59-03:00`,
      fundingInstruction: {
        rail: BOLETO_RAIL,
        barcode,
        digitableLine,
        dueDate,
        pixCopiaECola: pix?.pixCopiaECola ?? '',
        seuNumero,
      },
    };
  }

  /** Inter's `pagador`: the owner's CNPJ (or CPF) and name; the owner's address when Brazilian, else the configured. */
  private payer(debtor: ChargeRequest['debtor']) {
    const a = debtor?.address ?? {};
    const cep = (a.postalCode ?? '').replace(/\D/g, '');
    const brazilian = a.country === 'BR' && cep.length === 8 && /^[A-Z]{2}$/.test(a.state ?? '') && a.city;
    const address = brazilian
      ? { endereco: (a.addressLine1 ?? '').slice(0, 100), cidade: a.city!.slice(0, 60), uf: a.state!, cep }
      : this.options.payerAddress;
    return {
      cpfCnpj: debtor?.cnpj ?? debtor?.cpf ?? '',
      tipoPessoa: debtor?.cpf ? 'FISICA' : 'JURIDICA',
      nome: (debtor?.name ?? '').slice(0, 100),
      ...address,
    };
  }

  checkNoticeToken(token: string): void {
    const expected = createHash('sha256').update(this.options.webhookToken).digest();
    const given = createHash('sha256').update(token).digest();
    if (!timingSafeEqual(expected, given)) throw new NoticeRejectedError('unknown notice token', 401);
  }

  /**
   * A notice is a claim: every RECEBIDO item is read back, and only the bank's record saying RECEBIDO with the same
   * amount is money. Items in other situations (registered, cancelled, expired) are news, not money: skipped.
   */
  async verifyNotice(token: string, body: unknown, timeoutMs?: number): Promise<NoticeVerdict> {
    this.checkNoticeToken(token);
    const verdict: NoticeVerdict = { confirmed: [], refused: [] };
    for (const item of parseBoletoNotice(body)) {
      if (item.situacao !== RECEIVED) continue;
      const record = await this.read(item.codigoSolicitacao, timeoutMs);
      const claimed = bankAmount(item.valorTotalRecebido);
      const refuse = (reason: string) => verdict.refused.push({ endToEndId: item.codigoSolicitacao, reason });
      if (!record) refuse('the bank holds no such boleto');
      else if (record.cobranca.situacao !== RECEIVED) refuse(`the bank says ${record.cobranca.situacao}`);
      else if (bankAmount(record.cobranca.valorTotalRecebido) !== claimed) refuse('the bank received another amount');
      else verdict.confirmed.push(received(record));
    }
    return verdict;
  }

  async registerNotices(url: string): Promise<void> {
    const path = `${BASE}/webhook`;
    const res = await this.client.request('PUT', path, { body: { webhookUrl: url } });
    if (res.status >= 300) throw rejected(`PUT ${path}`, res);
  }

  /** Every boleto paid in the window (by payment date, days in Brasília), every page. */
  async listReceived(window: TimeWindow): Promise<ReceivedPayment[]> {
    const records = await this.list({
      dataInicial: brasiliaDay(window.from),
      dataFinal: brasiliaDay(window.to),
      filtrarDataPor: 'PAGAMENTO',
      situacao: RECEIVED,
    });
    return records.filter((r) => r.cobranca.situacao === RECEIVED).map(received);
  }

  /**
   * Cancels the boleto of a deposit whose window closed unpaid (by its seuNumero). Idempotent: a boleto cancelled,
   * expired or paid already is left as it is and said so; a refusal of the cancel is read back, and only a boleto
   * still open after it is RailRejectedError.
   */
  async cancelCharge(seuNumero: string, reason: string): Promise<CancelOutcome> {
    const found = await this.findBySeuNumero(seuNumero);
    if (!found) return 'NOT_FOUND';
    const state = (r: BoletoRecord): CancelOutcome | undefined =>
      CLOSED.has(r.cobranca.situacao) ? 'ALREADY_CLOSED' : PAID.has(r.cobranca.situacao) ? 'PAID' : undefined;
    const before = state(found);
    if (before) return before;
    const codigo = found.cobranca.codigoSolicitacao;
    const path = `${BASE}/${encodeURIComponent(codigo)}/cancelar`;
    const res = await this.client.request('POST', path, { body: { motivoCancelamento: reason.slice(0, 50) } });
    if (res.status < 300) return 'CANCELLED';
    const after = await this.read(codigo);
    if (after?.cobranca.situacao === 'CANCELADO') return 'CANCELLED';
    const now = after && state(after);
    if (now) return now;
    throw rejected(`POST ${path}`, res);
  }

  /** The bank's record of one boleto; undefined on a 404. */
  private async read(codigo: string, timeoutMs?: number): Promise<BoletoRecord | undefined> {
    const path = `${BASE}/${encodeURIComponent(codigo)}`;
    const res = await this.client.request('GET', path, { timeoutMs });
    if (res.status === 404) return undefined;
    const record = res.body as BoletoRecord | undefined;
    if (res.status !== 200 || typeof record?.cobranca?.situacao !== 'string') {
      throw new RailUnavailableError(`the bank answered GET ${path} with HTTP ${res.status} and no boleto`);
    }
    return record;
  }

  /** The boleto registered under our seuNumero (Inter's list filter), issued within the last LOOKUP_DAYS. */
  private async findBySeuNumero(seuNumero: string, timeoutMs?: number): Promise<BoletoRecord | undefined> {
    const today = this.now();
    const records = await this.list(
      {
        dataInicial: brasiliaDay(new Date(today.getTime() - LOOKUP_DAYS * DAY_MS)),
        dataFinal: brasiliaDay(new Date(today.getTime() + DAY_MS)),
        filtrarDataPor: 'EMISSAO',
        seuNumero,
      },
      timeoutMs,
    );
    return records.find((r) => r.cobranca.seuNumero === seuNumero);
  }

  private async list(query: Record<string, string>, timeoutMs?: number): Promise<BoletoRecord[]> {
    const out: BoletoRecord[] = [];
    for (let page = 0; ; page++) {
      const res = await this.client.request('GET', BASE, {
        query: { ...query, 'paginacao.paginaAtual': page, 'paginacao.itensPorPagina': PAGE_SIZE },
        timeoutMs,
      });
      if (res.status !== 200) throw rejected(`GET ${BASE}`, res);
      const body = (res.body ?? {}) as { cobrancas?: unknown; totalPaginas?: number; ultimaPagina?: boolean };
      const items = body.cobrancas;
      // A 200 that is no page of boletos (no body, text, an item without its id) tells nothing, as `read` takes it:
      // the deposit's retry, the cancel's and the next reconciliation ask again. An empty page is `cobrancas: []`.
      if (!Array.isArray(items) || !items.every(isBoletoRecord)) {
        throw new RailUnavailableError(`the bank answered GET ${BASE} with HTTP 200 and no page of boletos`);
      }
      out.push(...items);
      if (body.ultimaPagina || !items.length || page + 1 >= (body.totalPaginas ?? 1)) return out;
    }
  }
}

function received(record: BoletoRecord): ReceivedPayment {
  const c = record.cobranca;
  const at = c.dataSituacao
    ? Date.parse(c.dataSituacao.length === 10 ? `${c.dataSituacao}T12:00:00-03:00` : c.dataSituacao)
    : NaN;
  const amount = bankAmount(c.valorTotalRecebido);
  return {
    endToEndId: c.codigoSolicitacao,
    ...(c.seuNumero ? { chargeId: c.seuNumero } : {}),
    // Unreadable, it is passed on as the bank wrote it, marked so, and recording refuses it (payments/
    // provider-amount.ts): never 0.00, which would keep the reference from its real amount for good, nor fractions of
    // a cent (100.995), which the ledger cannot show in BRL (decisions 0172, 0188).
    amount: amount ?? String(c.valorTotalRecebido ?? ''),
    ...(amount
      ? {}
      : { unreadable: `valorTotalRecebido ${JSON.stringify(c.valorTotalRecebido)} is no amount in cents` }),
    asset: BOLETO_ASSET,
    // Inter dates a payment by its day only: noon of it in Brasília, never later than now.
    receivedAt: new Date(Number.isNaN(at) ? Date.now() : Math.min(at, Date.now())).toISOString(),
    ...(c.pagador?.nome ? { payer: c.pagador.nome } : {}),
    returns: [],
  };
}

const brasiliaDay = (d: Date): string => new Date(d.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);

function rejected(call: string, res: BankResponse): RailRejectedError {
  const problem = res.body as { title?: string; detail?: string } | undefined;
  const why = problem?.detail ?? problem?.title ?? '';
  return new RailRejectedError(`bank refused ${call}: HTTP ${res.status} ${why}`.trim(), res.status, res.body);
}

/**
 * The boleto under the deposit's seuNumero takes no payment (paid or closed): no deposit is opened on it, for good,
 * and the customer asks again with a new X-Idempotency-Key. 410, not 409: it is this request's boleto, not another's
 * (decision 0329, as 0277 for a PIX charge).
 */
function unpayable(seuNumero: string, record: BoletoRecord): RailRejectedError {
  const situation = record.cobranca.situacao;
  return new RailRejectedError(
    `the bank holds boleto ${seuNumero} as ${situation}: it takes no payment, so no deposit is opened on it` +
      (PAID.has(situation) ? ' (its payment, if recorded, waits in suspense)' : ''),
    410,
    record,
    false,
    'its boleto for this request can no longer be paid; ask again with a new X-Idempotency-Key',
  );
}
