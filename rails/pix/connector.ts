import { timingSafeEqual } from 'node:crypto';
import { NoticeRejectedError, RailRejectedError, RailUnavailableError } from '../errors';
import type {
  ChargeCreated,
  ChargeRequest,
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
import { BrCodeError, brCodeLocation, encodeBrCode } from './br-code';
import type { PixClient, PixResponse } from './client';

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

interface PixItem {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  infoPagador?: string;
  pagador?: { nome?: string };
  devolucoes?: { id: string; valor: string; status: string; motivo?: string }[];
}

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

  verifyNotice(token: string, body: unknown): ReceivedPayment[] {
    const expected = Buffer.from(this.options.webhookToken);
    const given = Buffer.from(token);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      throw new NoticeRejectedError('unknown notice token', 401);
    }
    const items = (body as { pix?: unknown })?.pix;
    if (!Array.isArray(items) || !items.every(isPixItem)) {
      throw new NoticeRejectedError('a notice is {"pix": [{endToEndId, valor, horario, txid?}]}', 400);
    }
    return items.map(received);
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

function isPixItem(item: unknown): item is PixItem {
  const p = item as PixItem;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.endToEndId === 'string' &&
    typeof p.valor === 'string' &&
    typeof p.horario === 'string' &&
    (p.txid === undefined || typeof p.txid === 'string')
  );
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
