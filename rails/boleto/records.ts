import Decimal from 'decimal.js';
import { NoticeRejectedError, type NoticeProblem } from '../errors';
import { isRfc3339Instant } from '../pix/notices';

// The bank's words (Inter Cobrança v3) as this rail reads them: a boleto's record (`GET
// /cobranca/v3/cobrancas/{codigoSolicitacao}`, an item of the list), a notice's items, and their checks. No HTTP
// here: connector.ts asks, api/rail-notices.ts answers.

/** `GET /cobranca/v3/cobrancas/{codigoSolicitacao}` and each item of the list's `cobrancas`. */
export interface BoletoRecord {
  cobranca: {
    codigoSolicitacao: string;
    seuNumero?: string;
    situacao: string;
    dataVencimento?: string;
    valorNominal?: string | number;
    valorTotalRecebido?: string | number;
    dataSituacao?: string;
    origemRecebimento?: string;
    pagador?: { nome?: string };
  };
  boleto?: { nossoNumero?: string; codigoBarras?: string; linhaDigitavel?: string };
  pix?: { txid?: string; pixCopiaECola?: string };
}

/** Whether an item of the bank's list is a boleto's record: its id and its situation, at least. */
export function isBoletoRecord(item: unknown): item is BoletoRecord {
  const cobranca = (item as { cobranca?: { codigoSolicitacao?: unknown; situacao?: unknown } } | null)?.cobranca;
  return typeof cobranca?.codigoSolicitacao === 'string' && typeof cobranca.situacao === 'string';
}

/** One item of the array the bank POSTs to the registered URL. */
export interface BoletoNoticeItem {
  codigoSolicitacao: string;
  seuNumero?: string;
  situacao: string;
  dataHoraSituacao?: string;
  valorTotalRecebido?: string | number;
  origemRecebimento?: string;
}

/** The one state that is money received (MARCADO_RECEBIDO is a boleto the account holder marked paid by hand). */
export const RECEIVED = 'RECEBIDO';
const CODIGO = /^[0-9a-fA-F-]{8,64}$/;
const AMOUNT = /^\d{1,13}(\.\d{1,2})?$/;

/** An amount the bank wrote (a JSON number or a decimal string) with two places, or undefined when it is not one. */
export function bankAmount(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || !AMOUNT.test(text)) return undefined;
  return new Decimal(text).toFixed(2);
}

function itemProblems(item: unknown): NoticeProblem[] {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return [{ path: '', message: 'must be an object {codigoSolicitacao, situacao, valorTotalRecebido, ...}' }];
  }
  const p = item as Record<string, unknown>;
  const problems: NoticeProblem[] = [];
  if (typeof p.codigoSolicitacao !== 'string' || !CODIGO.test(p.codigoSolicitacao)) {
    problems.push({ path: '/codigoSolicitacao', message: 'must be the bank’s id of the boleto (a UUID)' });
  }
  if (typeof p.situacao !== 'string' || !p.situacao) problems.push({ path: '/situacao', message: 'is required' });
  if (p.situacao === RECEIVED) {
    const amount = bankAmount(p.valorTotalRecebido);
    if (!amount || !new Decimal(amount).gt(0)) {
      problems.push({ path: '/valorTotalRecebido', message: 'must be an amount above zero for RECEBIDO' });
    }
  }
  if (p.dataHoraSituacao !== undefined && (typeof p.dataHoraSituacao !== 'string' || !isInstant(p.dataHoraSituacao))) {
    problems.push({ path: '/dataHoraSituacao', message: 'must be an instant (2026-01-31T12:00:00Z)' });
  }
  return problems;
}

// Inter writes `dataHoraSituacao` with an offset or none (local time in Brasília): both are instants.
const isInstant = (s: string) => isRfc3339Instant(s) || !Number.isNaN(Date.parse(s));

/** A notice's items, every one well formed; else NoticeRejectedError 400 naming each bad field (`/2/situacao`). */
export function parseBoletoNotice(body: unknown): BoletoNoticeItem[] {
  if (!Array.isArray(body)) {
    throw new NoticeRejectedError('a boleto notice is an array of {codigoSolicitacao, situacao, ...}', 400, [
      { path: '', message: 'must be an array' },
    ]);
  }
  const problems = body.flatMap((item, i) => itemProblems(item).map((p) => ({ ...p, path: `/${i}${p.path}` })));
  if (problems.length) {
    const first = problems[0];
    throw new NoticeRejectedError(`malformed boleto notice: ${first.path} ${first.message}`, 400, problems);
  }
  return body as BoletoNoticeItem[];
}
