import { createHash, timingSafeEqual } from 'node:crypto';
import { NoticeRejectedError, RailRejectedError, RailUnavailableError } from '../errors';
import type {
  ChargeCreated,
  ChargeRequest,
  NoticeVerdict,
  PayoutRequest,
  PayoutState,
  PayoutStatus,
  Rail,
  ReceivedPayment,
  ReturnRequest,
  ReturnState,
  ReturnStatus,
  TimeWindow,
} from '../rail';
import { encodeBrCode } from './br-code';
import type { PixClient, PixResponse } from './client';
import { parseNoticeItems, pixItemProblems, unconfirmed, type PixItem } from './notices';

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
}

const PAGE_SIZE = 100;

const PAYOUT_STATUS: Record<string, PayoutStatus> = {
  EM_PROCESSAMENTO: 'PENDING',
  REALIZADO: 'COMPLETED',
  NAO_REALIZADO: 'FAILED',
};
const RETURN_STATUS: Record<string, ReturnStatus> = {
  EM_PROCESSAMENTO: 'PENDING',
  DEVOLVIDO: 'RETURNED',
  NAO_REALIZADO: 'FAILED',
};

interface Cob {
  txid: string;
  calendario: { criacao: string; expiracao: number };
  location?: string;
  loc?: { location?: string };
  valor: { original: string };
  chave: string;
}

// A notice's items are read back from the PSP this many at a time: a notice of many items is not a burst at the PSP.
const READ_BACK_CONCURRENCY = 4;

export class PixRail implements Rail {
  readonly rail = 'PIX_KEY';

  constructor(
    private readonly client: PixClient,
    private readonly options: PixRailOptions,
  ) {}

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
    if (res.status === 200 || res.status === 201) return this.funding(res.body as Cob);
    // The txid is taken: ours from an earlier try when it is the same charge, else a real refusal.
    const again = await this.client.request('GET', path, { timeoutMs });
    const existing = again.body as Cob | undefined;
    if (again.status === 200 && existing?.valor?.original === request.amount && existing.chave === body.chave) {
      return this.funding(existing);
    }
    throw rejected(`PUT ${path}`, res);
  }

  private funding(cob: Cob): ChargeCreated {
    const location = cob.location ?? cob.loc?.location;
    if (!location) throw new RailRejectedError(`charge ${cob.txid} has no location`, 502, cob);
    const expiresAt = new Date(Date.parse(cob.calendario.criacao) + cob.calendario.expiracao * 1000);
    return {
      chargeId: cob.txid,
      keyType: this.options.receivingKeyType,
      key: cob.chave,
      location,
      pixCopiaECola: encodeBrCode({
        location,
        amount: cob.valor.original,
        merchantName: this.options.merchantName,
        merchantCity: this.options.merchantCity,
      }),
      expiresAt: expiresAt.toISOString(),
    };
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
      out.push(...(body.pix ?? []).map(received));
      const pages = body.parametros?.paginacao?.quantidadeDePaginas ?? 1;
      if (page + 1 >= pages || !body.pix?.length) return out;
    }
  }

  async sendPayout(request: PayoutRequest): Promise<PayoutState> {
    const path = `/v3/gn/pix/${request.payoutId}`;
    const res = await this.client.request('PUT', path, {
      body: {
        valor: request.amount,
        pagador: { chave: this.options.receivingKey },
        favorecido: { chave: request.key },
      },
    });
    if (res.status === 200 || res.status === 201) return payout(request.payoutId, res.body);
    if (res.status !== 409) throw rejected(`PUT ${path}`, res);
    // The PSP already has this idEnvio: an earlier try reached it. Its state is the answer, if it is this payout.
    // A PSP that holds it but cannot show it yet is asked again later: a refusal here would mark FAILED a payout
    // that is leaving.
    return this.payoutStatus(request.payoutId).catch((err: unknown) => {
      if (!(err instanceof RailRejectedError)) throw err;
      throw new RailUnavailableError(`the PSP holds payout ${request.payoutId} but does not show it: ${err.message}`);
    });
  }

  async payoutStatus(payoutId: string): Promise<PayoutState> {
    const path = `/v2/gn/pix/enviados/id-envio/${payoutId}`;
    const res = await this.client.request('GET', path);
    if (res.status !== 200) throw rejected(`GET ${path}`, res);
    return payout(payoutId, res.body);
  }

  async returnPayment(request: ReturnRequest): Promise<ReturnState> {
    const path = `/pix/${request.endToEndId}/devolucao/${request.returnId}`;
    const res = await this.client.request('PUT', path, {
      body: {
        valor: request.amount,
        natureza: 'ORIGINAL',
        ...(request.description ? { descricao: request.description.slice(0, 140) } : {}),
      },
    });
    if (res.status === 200 || res.status === 201) return returned(res.body);
    const again = await this.client.request('GET', path);
    if (again.status === 200 && (again.body as { valor?: string })?.valor === request.amount) {
      return returned(again.body);
    }
    // The PSP holds this return id (an earlier try reached it) but cannot show it yet: ask again later. A refusal
    // here would put back in suspense money the PSP is sending back.
    if (res.status === 409 && again.status !== 200) {
      throw new RailUnavailableError(`the PSP holds return ${request.returnId} but does not show it (${again.status})`);
    }
    throw rejected(`PUT ${path}`, res);
  }

  async returnStatus(endToEndId: string, returnId: string): Promise<ReturnState> {
    const path = `/pix/${endToEndId}/devolucao/${returnId}`;
    const res = await this.client.request('GET', path);
    if (res.status !== 200) throw rejected(`GET ${path}`, res);
    return returned(res.body);
  }
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

function received(p: PixItem): ReceivedPayment {
  return {
    endToEndId: p.endToEndId,
    ...(p.txid ? { chargeId: p.txid } : {}),
    amount: p.valor,
    receivedAt: new Date(p.horario).toISOString(),
    ...(p.pagador?.nome ? { payer: p.pagador.nome } : {}),
    returns: (p.devolucoes ?? []).map(returned),
  };
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

function payout(payoutId: string, body: unknown): PayoutState {
  const p = body as { status?: string; e2eId?: string; endToEndId?: string; motivo?: string };
  const status = PAYOUT_STATUS[p.status ?? ''];
  if (!status) throw new RailRejectedError(`payout ${payoutId}: unknown status ${p.status}`, 502, body);
  const endToEndId = p.e2eId ?? p.endToEndId;
  return {
    payoutId,
    status,
    ...(endToEndId ? { endToEndId } : {}),
    ...(p.motivo ? { reason: p.motivo } : {}),
  };
}

function rejected(call: string, res: PixResponse): RailRejectedError {
  const problem = res.body as { title?: string; detail?: string } | undefined;
  const why = problem?.detail ?? problem?.title ?? '';
  return new RailRejectedError(`PSP refused ${call}: HTTP ${res.status} ${why}`.trim(), res.status, res.body);
}
