import { createHash, timingSafeEqual } from 'node:crypto';
import { Dec } from '../../domain/money';
import { sameDictKey } from '../../domain/dict-key';
import { NoticeRejectedError, RailRejectedError, RailUnavailableError } from '../errors';
import type {
  ChargeCreated,
  ChargeRequest,
  NoticeVerdict,
  PayoutRequest,
  PayoutState,
  PayoutStatus,
  ChargeCapability,
  ListingCapability,
  NoticeCapability,
  PayoutCapability,
  RailConnector,
  ReceivedPayment,
  ReturnCapability,
  ReturnRequest,
  ReturnState,
  ReturnStatus,
  SandboxPayerCapability,
  TimeWindow,
} from '../rail';
import { BrCodeError, brCodeLocation, encodeBrCode } from './br-code';
import type { PixClient, PixResponse } from './client';
import { parseNoticeItems, pixItemProblems, unconfirmed, type PixItem } from './notices';
import {
  chargeRefusalForCustomer,
  describeProblem,
  payoutRefusalForCustomer,
  returnRefusalForCustomer,
} from './problem';

// The PIX connector: Cambio's rail boundary spoken as API Pix (charges, received Pix, returns, webhook) and the
// PSP payout shape most Brazilian PSPs deploy (Efí's "envio de Pix"). Every call carries our id; a PSP that
// already has that id is read back, so a retry is the same charge, payout or return.

export interface PixRailOptions {
  /** PIX_RECEIVING_KEY: the key charges are paid to and payouts are sent from. */
  receivingKey: string;
  receivingKeyType: string;
  /** PIX_WEBHOOK_TOKEN: the secret part of the notice URL the PSP POSTs to. */
  webhookToken: string;
  /** Fields 59 and 60 of the BR Code. */
  merchantName: string;
  merchantCity: string;
  /** In sandbox: the simulated PSP's payer of deposits (./sandbox-payer.ts). */
  sandbox?: SandboxPayerCapability;
}

/** The rail as operations name it, and the one asset it moves. */
export const PIX_RAIL = 'PIX_KEY';
export const PIX_ASSET = 'BRL';

const PAGE_SIZE = 100;

const PAYOUT_STATUS: Record<string, PayoutStatus> = {
  EM_PROCESSAMENTO: 'PENDING',
  REALIZADO: 'COMPLETED',
  NAO_REALIZADO: 'FAILED',
};
// What the customer is told of a payout the PSP ended NAO_REALIZADO (decision 0319); its `motivo` is the operator's.
const NOT_MADE_FOR_CUSTOMER = "the PSP did not make the Pix to the payee's PIX key";
const RETURN_STATUS: Record<string, ReturnStatus> = {
  EM_PROCESSAMENTO: 'PENDING',
  DEVOLVIDO: 'RETURNED',
  NAO_REALIZADO: 'FAILED',
};

interface Cob {
  txid: string;
  status?: string;
  calendario: { criacao: string; expiracao: number };
  location?: string;
  loc?: { location?: string };
  valor: { original: string };
  chave: string;
}

// A charge's `valor.original` as a PSP may write it back (API Pix writes two decimals; "100.5" is the same amount).
const CHARGE_VALOR = /^\d{1,10}(\.\d{1,2})?$/;

// A notice's items are read back from the PSP this many at a time: a notice of many items is not a burst at the PSP.
const READ_BACK_CONCURRENCY = 4;

export class PixRail
  implements RailConnector, ChargeCapability, NoticeCapability, ListingCapability, PayoutCapability, ReturnCapability
{
  readonly rail = PIX_RAIL;
  readonly charges = this;
  readonly notices = this;
  readonly listing = this;
  readonly payouts = this;
  readonly returns = this;
  readonly sandbox?: SandboxPayerCapability;

  constructor(
    private readonly client: PixClient,
    private readonly options: PixRailOptions,
  ) {
    this.sandbox = options.sandbox;
  }

  /** Closes the client's connections (a process that stops). */
  close(): Promise<void> {
    return this.client.close();
  }

  async createCharge(request: ChargeRequest, timeoutMs?: number): Promise<ChargeCreated> {
    const path = `/cob/${request.chargeId}`;
    const body = {
      calendario: { expiracao: request.expiresInSeconds },
      ...(request.debtor ? { devedor: debtor(request.debtor) } : {}),
      valor: { original: request.amount },
      chave: this.options.receivingKey,
      ...(request.description ? { solicitacaoPagador: request.description.slice(0, 140) } : {}),
    };
    const res = await this.client.request('PUT', path, { body, timeoutMs });
    const took = res.status === 200 || res.status === 201;
    if (took && this.isCharge(res.body, request) && payable(res.body)) return this.funding(res.body);
    // The txid is taken (ours from an earlier try when it is the same charge, else a real refusal), or the PSP took
    // the PUT but answered something that is not this charge (or not one that takes payments): what it holds under
    // the txid is read back.
    const again = await this.client.request('GET', path, { timeoutMs });
    if (again.status === 200 && this.isCharge(again.body, request)) {
      if (payable(again.body)) return this.funding(again.body);
      throw unpayable(request.chargeId, again.body);
    }
    // A 2xx whose charge cannot be read says nothing final: the client's retry (same txid) asks again (decision 0196).
    if (took)
      throw new RailUnavailableError(`the PSP answered PUT ${path} with a charge that is not ${request.chargeId}`);
    // A 404 to a create names nothing of the charge (a key the PSP does not know is a 400): the PSP has no such
    // route, as when PIX_PSP_URL lacks its API's base (`.../api`). The operator's to fix, so "not now" (decision 0262).
    if (res.status === 404) {
      throw new RailUnavailableError(`the PSP has no PUT ${path} (404): check PIX_PSP_URL, the base of its API`, 60);
    }
    throw rejected(`PUT ${path}`, res, chargeRefusalForCustomer(res.body));
  }

  /**
   * Whether a PSP's body is the charge asked for: its txid, amount and key, and a creation and expiry to date it. A
   * body naming another charge would give the deposit a txid and BR Code it never asked for (decision 0196).
   */
  private isCharge(body: unknown, request: ChargeRequest): body is Cob {
    const cob = body as Partial<Cob> | undefined;
    return (
      typeof cob === 'object' &&
      cob !== null &&
      cob.txid === request.chargeId &&
      typeof cob.valor?.original === 'string' &&
      CHARGE_VALOR.test(cob.valor.original) &&
      new Dec(cob.valor.original).eq(request.amount) &&
      // DICT keeps an e-mail key in lower case: a PSP may write back the configured key so.
      cob.chave?.toLowerCase() === this.options.receivingKey.toLowerCase() &&
      typeof cob.calendario?.criacao === 'string' &&
      !Number.isNaN(Date.parse(cob.calendario.criacao)) &&
      Number.isInteger(cob.calendario.expiracao) &&
      cob.calendario.expiracao > 0
    );
  }

  private funding(cob: Cob): ChargeCreated {
    const given = cob.location ?? cob.loc?.location;
    if (!given) throw new RailRejectedError(`charge ${cob.txid} has no location`, 502, cob);
    // Checked before the charge is answered, so a deposit whose BR Code cannot be written is never opened.
    let location: string;
    try {
      location = brCodeLocation(given);
    } catch (err) {
      if (err instanceof BrCodeError) throw new RailRejectedError(`charge ${cob.txid}: ${err.message}`, 502, cob);
      throw err;
    }
    const expiresAt = new Date(Date.parse(cob.calendario.criacao) + cob.calendario.expiracao * 1000);
    // The receiving key, the charge's txid and `location`, the dynamic BR Code ("Pix Copia e Cola") any bank app
    // pays, and when the charge stops taking payments.
    const fundingInstruction = {
      rail: PIX_RAIL,
      keyType: this.options.receivingKeyType,
      key: cob.chave,
      txid: cob.txid,
      location,
      pixCopiaECola: encodeBrCode({
        location,
        amount: cob.valor.original,
        merchantName: this.options.merchantName,
        merchantCity: this.options.merchantCity,
      }),
      expiresAt: expiresAt.toISOString(),
    };
    return { chargeId: cob.txid, expiresAt: fundingInstruction.expiresAt, fundingInstruction };
  }

  checkNoticeToken(token: string): void {
    // Digests of equal length: the compare takes the same time whatever the length of the guess.
    const expected = createHash('sha256').update(this.options.webhookToken).digest();
    const given = createHash('sha256').update(token).digest();
    if (!timingSafeEqual(expected, given)) throw new NoticeRejectedError('unknown notice token', 401);
  }

  async verifyNotice(token: string, body: unknown, timeoutMs?: number): Promise<NoticeVerdict> {
    this.checkNoticeToken(token);
    const claims = parseNoticeItems(body);
    const verdict: NoticeVerdict = { confirmed: [], refused: [] };
    const records = await inBatches(claims, READ_BACK_CONCURRENCY, (claim) =>
      this.readReceived(claim.endToEndId, timeoutMs),
    );
    claims.forEach((claim, i) => {
      const record = records[i];
      const why = record ? unconfirmed(claim, record) : 'the PSP has no Pix with this endToEndId';
      if (why) verdict.refused.push({ endToEndId: claim.endToEndId, reason: why });
      else verdict.confirmed.push(received(record!));
    });
    return verdict;
  }

  /**
   * The PSP's own record of a received Pix (`GET /pix/{e2eid}`), or undefined when it has none (404). An answer
   * that is neither, or a record that is not a Pix, is RailUnavailableError: the PSP could not tell us, so the
   * notice is answered 503 and sent again.
   */
  async readReceived(endToEndId: string, timeoutMs?: number): Promise<PixItem | undefined> {
    const path = `/pix/${encodeURIComponent(endToEndId)}`;
    const res = await this.client.request('GET', path, { timeoutMs });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new RailUnavailableError(rejected(`GET ${path}`, res).message);
    const problems = pixItemProblems(res.body);
    if (problems.length) {
      const [p] = problems;
      throw new RailUnavailableError(
        `the PSP answered GET ${path} with a record that is not a Pix: ${p.path} ${p.message}`,
      );
    }
    return res.body as PixItem;
  }

  async registerNotices(url: string): Promise<void> {
    const path = `/webhook/${encodeURIComponent(this.options.receivingKey)}`;
    const res = await this.client.request('PUT', path, { body: { webhookUrl: url } });
    if (res.status >= 300) throw rejected(`PUT ${path}`, res);
  }

  async listReceived(window: TimeWindow): Promise<ReceivedPayment[]> {
    const out: ReceivedPayment[] = [];
    for (let page = 0; ; page++) {
      const res = await this.client.request('GET', '/pix', {
        query: {
          inicio: window.from.toISOString(),
          fim: window.to.toISOString(),
          'paginacao.paginaAtual': page,
          'paginacao.itensPorPagina': PAGE_SIZE,
        },
      });
      if (res.status !== 200) throw rejected('GET /pix', res);
      const body = res.body as { pix?: PixItem[]; parametros?: { paginacao?: { quantidadeDePaginas?: number } } };
      out.push(...(body.pix ?? []).map(listed));
      const pages = body.parametros?.paginacao?.quantidadeDePaginas ?? 1;
      if (page + 1 >= pages || !body.pix?.length) return out;
    }
  }

  /**
   * Sends the payout under its idEnvio (docs/decisions/0108). Only a final answer ends it: the PSP's state in the
   * PUT's answer (EM_PROCESSAMENTO, REALIZADO; NAO_REALIZADO only once the read-back shows the same or nothing under
   * the idEnvio, decision 0186), or a refusal (a 4xx other than 409) whose read-back
   * finds nothing under the idEnvio, which is RailRejectedError. Any other answer (202, a 2xx whose status is
   * unknown or missing, 409, 408, 425, 429, 5xx, a timeout) says nothing of what the PSP holds: the idEnvio is read
   * back, and a payout the PSP shows is its answer (a status it does not name is PENDING). One it does not show
   * after such an answer is RailUnavailableError, and the caller's retry sends the same PUT again: the idEnvio makes
   * it the same payout.
   */
  async sendPayout(request: PayoutRequest): Promise<PayoutState> {
    const path = `/v3/gn/pix/${request.payoutId}`;
    // The order carries no key type; keys of different types never look alike (an e-mail, a UUID, +55 and digits).
    if (sameDictKey(this.options.receivingKeyType, request.key, this.options.receivingKey)) {
      return this.refuseOwnKey(request);
    }
    const answer = await this.answerOf('PUT', path, {
      valor: request.amount,
      pagador: { chave: this.options.receivingKey },
      favorecido: { chave: request.key },
    });
    return finalAnswer(
      { answer, path, shows: 'payout under that idEnvio', forCustomer: payoutRefusalForCustomer },
      (body) => payoutAnswer(request.payoutId, body),
      () => this.findPayout(request.payoutId),
    );
  }

  /**
   * A payout to our own receiving key (an instruction approved before decision 0312, or under another
   * PIX_RECEIVING_KEY) is refused before its PUT: it would only go round our own account, the customer debited for
   * it. One the PSP already holds under its idEnvio (sent before this rule) is followed as it is. The refusal is the
   * first attempt's final answer (FAILED, hold released); on a retried attempt it is not final (decision 0159).
   */
  private async refuseOwnKey(request: PayoutRequest): Promise<PayoutState> {
    const held = await this.findPayout(request.payoutId);
    if (held) return held;
    const message = `payout ${request.payoutId} is not sent: its key is our own receiving key (PIX_RECEIVING_KEY)`;
    throw new RailRejectedError(message, 400, undefined, false, "the payee's PIX key is Cambio's own receiving key");
  }

  /**
   * A payout sent before, read again: its state at the PSP, or, when the PSP shows nothing under its idEnvio, the
   * same PUT sent again (sendPayout's rules). A read the PSP cannot answer now is RailUnavailableError. The PSP
   * has acknowledged this payout already (sendPayout answered it), so a refusal of the PUT sent again is no final
   * answer: a PSP that refuses a repeated idEnvio with a 4xx other than 409 while its read side lags may still pay
   * the first one. It stays pending (RailUnavailableError) and visible as stuck, never FAILED with its hold released.
   */
  async followPayout(request: PayoutRequest): Promise<PayoutState> {
    return followAcknowledged(
      { what: `payout ${request.payoutId}`, under: 'idEnvio', firstMay: 'pay' },
      () => this.findPayout(request.payoutId),
      () => this.sendPayout(request),
    );
  }

  async payoutStatus(payoutId: string): Promise<PayoutState> {
    const path = `/v2/gn/pix/enviados/id-envio/${payoutId}`;
    const res = await this.client.request('GET', path);
    if (res.status !== 200) throw rejected(`GET ${path}`, res);
    return payout(payoutId, res.body);
  }

  /** The payout the PSP holds under this idEnvio; undefined on a 404 (it holds none). */
  private async findPayout(payoutId: string): Promise<PayoutState | undefined> {
    const path = `/v2/gn/pix/enviados/id-envio/${payoutId}`;
    const res = await this.client.request('GET', path);
    if (res.status === 200) return payout(payoutId, res.body);
    if (res.status === 404) return undefined;
    throw new RailUnavailableError(`the PSP answered ${res.status} to GET ${path}: read again later`);
  }

  /**
   * Asks for a return under our return id, by sendPayout's rules (docs/decisions/0108): the return's state in the
   * PUT's answer, or the one the PSP shows under that id; a refusal (4xx other than 409) with nothing under the id
   * is RailRejectedError; any other answer with nothing under the id is RailUnavailableError (the retry sends the
   * same PUT again).
   */
  async returnPayment(request: ReturnRequest): Promise<ReturnState> {
    const path = `/pix/${request.endToEndId}/devolucao/${request.returnId}`;
    const answer = await this.answerOf('PUT', path, {
      valor: request.amount,
      natureza: 'ORIGINAL',
      ...(request.description ? { descricao: request.description.slice(0, 140) } : {}),
    });
    return finalAnswer(
      { answer, path, shows: 'return under that id', forCustomer: returnRefusalForCustomer },
      (body) => returnAnswer(request, body),
      () => this.findReturn(request),
    );
  }

  /**
   * A return asked before, read again; one the PSP does not show is asked again under the same id. As with
   * followPayout, the PSP acknowledged it already: a refusal of the repeated PUT leaves it pending, not FAILED.
   */
  async followReturn(request: ReturnRequest): Promise<ReturnState> {
    return followAcknowledged(
      { what: `return ${request.returnId}`, under: 'id', firstMay: 'return the money' },
      () => this.findReturn(request),
      () => this.returnPayment(request),
    );
  }

  async returnStatus(endToEndId: string, returnId: string): Promise<ReturnState> {
    const path = `/pix/${endToEndId}/devolucao/${returnId}`;
    const res = await this.client.request('GET', path);
    if (res.status !== 200) throw rejected(`GET ${path}`, res);
    return returned(res.body);
  }

  /** The return the PSP holds under our id; undefined on a 404 (it holds none). */
  private async findReturn(request: ReturnRequest): Promise<ReturnState | undefined> {
    const path = `/pix/${request.endToEndId}/devolucao/${request.returnId}`;
    const res = await this.client.request('GET', path);
    if (res.status === 200) return returnRead(request, res.body);
    if (res.status === 404) return undefined;
    throw new RailUnavailableError(`the PSP answered ${res.status} to GET ${path}: read again later`);
  }

  /** The PSP's answer to a call, or, when it gave none we can read (down, slow, 5xx, 408, 425, 429), why not. */
  private async answerOf(method: string, path: string, body: unknown): Promise<{ res?: PixResponse; said: string }> {
    try {
      const res = await this.client.request(method, path, { body });
      return { res, said: `HTTP ${res.status}` };
    } catch (err) {
      if (!(err instanceof RailUnavailableError)) throw err;
      return { said: `nothing final (${err.message})` };
    }
  }
}

/**
 * Whether a charge the PSP holds takes payments: API Pix's ATIVA. A charge the PSP or its receiver removed
 * (REMOVIDA_PELO_PSP, REMOVIDA_PELO_USUARIO_RECEBEDOR) takes none, and one already CONCLUIDA took its one Pix before
 * any deposit carried it. A body without a status (the spec requires one) says nothing of removal: it is taken, as
 * before (decision 0277).
 */
function payable(cob: Cob): boolean {
  return cob.status === undefined || cob.status === 'ATIVA';
}

/**
 * The charge under the deposit's txid can never be paid: no deposit is opened on it, for good (the txid is the
 * key's, so every retry finds the same charge), and the customer asks again with a new key. 410, not 409: it is
 * this request's charge, not another's (decision 0277).
 */
function unpayable(txid: string, cob: Cob): RailRejectedError {
  return new RailRejectedError(
    `the PSP holds charge ${txid} as ${String(cob.status)}: it takes no payment, so no deposit is opened on it` +
      (cob.status === 'CONCLUIDA' ? ' (its Pix, if recorded, waits in suspense)' : ''),
    410,
    cob,
    false,
    'its charge for this request can no longer be paid; ask again with a new X-Idempotency-Key',
  );
}

function debtor(d: NonNullable<ChargeRequest['debtor']>) {
  // API Pix: a debtor is a CPF or a CNPJ with a name, never both.
  return d.cnpj ? { cnpj: d.cnpj, nome: d.name } : { cpf: d.cpf, nome: d.name };
}

/** `fn` over `items`, at most `size` at a time, results in the items' order. */
async function inBatches<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

/**
 * A Pix of the PSP's list. One without an end-to-end id or a `horario` that dates it cannot be translated: it is
 * `unreadable`, which recording refuses for it alone (decision 0188), so the run records the others and its window
 * stays for the next run. Thrown, it failed the whole run, and every Pix of its window waited with it.
 */
function listed(p: PixItem): ReceivedPayment {
  const e2e = typeof p?.endToEndId === 'string' && p.endToEndId ? p.endToEndId : undefined;
  if (e2e && typeof p.horario === 'string' && !Number.isNaN(Date.parse(p.horario))) return received(p);
  return {
    endToEndId: e2e ?? '(no endToEndId)',
    amount: typeof p?.valor === 'string' ? p.valor : '',
    asset: PIX_ASSET,
    receivedAt: '',
    returns: [],
    unreadable: e2e ? `its horario ${JSON.stringify(p.horario)} is no instant` : 'it has no endToEndId',
    ...(e2e ? {} : { unnamed: true }),
  };
}

function received(p: PixItem): ReceivedPayment {
  return {
    endToEndId: p.endToEndId,
    ...(p.txid ? { chargeId: p.txid } : {}),
    amount: p.valor,
    asset: PIX_ASSET,
    receivedAt: new Date(p.horario).toISOString(),
    ...(p.pagador?.nome ? { payer: p.pagador.nome } : {}),
    returns: readableReturns(p.devolucoes),
  };
}

/**
 * The returns a PSP's record lists, those it writes as API Pix does (`id` and `status`). They only settle a return of
 * ours sooner (its workflow reads it at the PSP anyway), so a list Cambio cannot read never fails the Pix with it.
 */
function readableReturns(devolucoes: unknown): ReturnState[] {
  if (!Array.isArray(devolucoes)) return [];
  return devolucoes
    .filter((d: unknown) => {
      const r = d as { id?: unknown; status?: unknown } | null;
      return typeof r === 'object' && r !== null && typeof r.id === 'string' && typeof r.status === 'string';
    })
    .map(returned);
}

function returned(body: unknown): ReturnState {
  const d = body as { id: string; valor: string; status: string; motivo?: string; rtrId?: string };
  return {
    returnId: d.id,
    amount: d.valor,
    status: RETURN_STATUS[d.status] ?? 'PENDING',
    ...(d.motivo ? { reason: d.motivo } : {}),
    ...(d.rtrId ? { endToEndId: d.rtrId } : {}),
  };
}

/** A payout the PSP showed: a status it does not name (or none) is not final, so PENDING. */
function payout(payoutId: string, body: unknown): PayoutState {
  return payoutAnswer(payoutId, body) ?? { payoutId, status: 'PENDING' };
}

/** The payout's state in a PSP's answer, if the answer names a status we know; undefined for any other body. */
function payoutAnswer(payoutId: string, body: unknown): PayoutState | undefined {
  const p = (typeof body === 'object' && body !== null ? body : {}) as {
    idEnvio?: unknown;
    status?: unknown;
    e2eId?: string;
    endToEndId?: string;
    motivo?: string;
  };
  const status = typeof p.status === 'string' ? PAYOUT_STATUS[p.status] : undefined;
  // An answer that names another payout says nothing of this one.
  if (!status || (p.idEnvio !== undefined && p.idEnvio !== payoutId)) return undefined;
  const endToEndId = p.e2eId ?? p.endToEndId;
  return {
    payoutId,
    status,
    ...(endToEndId ? { endToEndId } : {}),
    ...(p.motivo ? { reason: p.motivo } : {}),
    // The PSP's `motivo` is free text in its words (decision 0319): the customer is told only that it was not made.
    ...(status === 'FAILED' ? { forCustomer: NOT_MADE_FOR_CUSTOMER } : {}),
  };
}

/** The return's state in a PSP's answer to the PUT, if it is this return with a status we know. */
function returnAnswer(request: ReturnRequest, body: unknown): ReturnState | undefined {
  const d = body as { id?: unknown; status?: unknown } | undefined;
  if (typeof d !== 'object' || d === null || typeof d.status !== 'string' || !RETURN_STATUS[d.status]) return undefined;
  if (d.id !== undefined && d.id !== request.returnId) return undefined;
  return returnRead(request, body);
}

/** A return the PSP showed under our id: a status it does not name (or none) is not final, so PENDING. */
function returnRead(request: ReturnRequest, body: unknown): ReturnState {
  const d = (typeof body === 'object' && body !== null ? body : {}) as {
    valor?: unknown;
    status?: unknown;
    motivo?: string;
    rtrId?: string;
  };
  return {
    returnId: request.returnId,
    amount: typeof d.valor === 'string' ? d.valor : request.amount,
    status: (typeof d.status === 'string' ? RETURN_STATUS[d.status] : undefined) ?? 'PENDING',
    ...(d.motivo ? { reason: d.motivo } : {}),
    ...(d.rtrId ? { endToEndId: d.rtrId } : {}),
  };
}

/** A 4xx that says "no" (not 409, which says the id is taken, nor the "come back later" ones the client raises). */
const isRefusal = (status: number): boolean => status >= 400 && status < 500 && status !== 409;

/**
 * What a PUT under our id (a payout's idEnvio, a return's id) ended with, by decision 0108's rules: the state a 200
 * or 201 says (`parse`: undefined for a body that names no state we know, or another id), or the one the PSP shows
 * under the id (`readBack`); a refusal with nothing under the id is
 * RailRejectedError; any other answer with nothing under it is RailUnavailableError (the retry sends the same PUT).
 * "Not made" is read back first, as a refusal is: it releases a hold or puts a payment back in suspense, and a PSP
 * that answers a repeated id NAO_REALIZADO while the first PUT is paying shows that one under it (decision 0186).
 */
async function finalAnswer<S extends { status: string }>(
  put: {
    answer: { res?: PixResponse; said: string };
    path: string;
    shows: string;
    /** What the customer may be told of a refusal (decision 0262); undefined: nothing beyond "refused". */
    forCustomer?: (body: unknown) => string | undefined;
  },
  parse: (body: unknown) => S | undefined,
  readBack: () => Promise<S | undefined>,
): Promise<S> {
  const { answer, path } = put;
  const said =
    answer.res && (answer.res.status === 200 || answer.res.status === 201) ? parse(answer.res.body) : undefined;
  if (said && said.status !== 'FAILED') return said;
  const held = await readBack();
  if (held) return held;
  if (said) return said;
  if (answer.res && isRefusal(answer.res.status)) {
    throw rejected(`PUT ${path}`, answer.res, put.forCustomer?.(answer.res.body));
  }
  throw new RailUnavailableError(
    `the PSP answered ${answer.said} to PUT ${path} and shows no ${put.shows}: it is sent again`,
  );
}

/**
 * A payout or return the PSP acknowledged before, followed: what it shows under the id, or the same PUT sent again.
 * Neither a refusal of that PUT nor its "not made" while the PSP still shows nothing is final (decision 0186): the
 * first PUT may still go through, so it stays pending (RailUnavailableError) and visible as stuck.
 */
async function followAcknowledged<S extends { status: string }>(
  call: { what: string; under: string; firstMay: string },
  readBack: () => Promise<S | undefined>,
  sendAgain: () => Promise<S>,
): Promise<S> {
  const held = await readBack();
  if (held) return held;
  const again = await sendAgain().catch((err: unknown) => {
    throw acknowledgedThenRefused(err, call.what);
  });
  if (again.status !== 'FAILED') return again;
  const shown = await readBack();
  if (shown) return shown;
  throw new RailUnavailableError(
    `${call.what}: the PSP answered its repeated PUT NAO_REALIZADO and shows nothing under its ${call.under}; ` +
      `the first PUT may still ${call.firstMay}, so it stays pending`,
  );
}

/** A refusal of a call the PSP acknowledged before: not final, so "come back later" (any other error as it is). */
function acknowledgedThenRefused(err: unknown, what: string): unknown {
  if (!(err instanceof RailRejectedError)) return err;
  return new RailUnavailableError(
    `the PSP acknowledged ${what} but now shows nothing and refuses it again: ${err.message}`,
  );
}

/**
 * A PSP's refusal, in its words for the operator (its detail and every `violacoes` field and reason, decision 0262);
 * `forCustomer`, what the customer may be told of it.
 */
function rejected(call: string, res: PixResponse, forCustomer?: string): RailRejectedError {
  const why = describeProblem(res.body);
  const message = `PSP refused ${call}: HTTP ${res.status} ${why}`.trim();
  return new RailRejectedError(message, res.status, res.body, false, forCustomer);
}
