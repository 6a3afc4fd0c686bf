import Decimal from 'decimal.js';
import { NoticeRejectedError, type NoticeProblem } from '../errors';

// What a PIX notice item must look like before Cambio asks the PSP about it (decisions.md, "A claim is not money"),
// and whether the PSP's own record of a Pix confirms what a notice claimed. No HTTP here: connector.ts reads the
// record back, api/rail-notices.ts answers.

/** A received Pix as API Pix writes it (a notice's item, `GET /pix/{e2eid}`, a page of `GET /pix`). */
export interface PixItem {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  infoPagador?: string;
  pagador?: { nome?: string };
  devolucoes?: { id: string; valor: string; status: string; motivo?: string }[];
}

// API Pix's `valor`: up to 10 integer digits, always two decimals.
export const PIX_VALOR = /^\d{1,10}\.\d{2}$/;
// The SPI's end-to-end id: E (or D, a return's), the ISPB (8 digits), yyyyMMddHHmm (12 digits), 11 of [a-zA-Z0-9].
export const PIX_END_TO_END_ID = /^[ED]\d{8}\d{12}[a-zA-Z0-9]{11}$/;
// RFC 3339 section 5.6 `date-time`: a full date, `T`, a time with optional fraction, and `Z` or a numeric offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Whether `s` is an RFC 3339 instant that names a real moment (no 30 February, no hour 24, no offset +25:00). */
export function isRfc3339Instant(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (m[9] && (Number(m[10]) > 23 || Number(m[11]) > 59)) return false;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  // The last day of the month: day 0 of the next one.
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  return !Number.isNaN(Date.parse(s));
}

/** What is wrong with one item (its JSON pointer below the item and why), or nothing. */
export function pixItemProblems(item: unknown): NoticeProblem[] {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return [{ path: '', message: 'must be an object {endToEndId, valor, horario, txid?}' }];
  }
  const p = item as Record<string, unknown>;
  const problems: NoticeProblem[] = [];
  if (typeof p.endToEndId !== 'string' || !PIX_END_TO_END_ID.test(p.endToEndId)) {
    problems.push({
      path: '/endToEndId',
      message: 'must be 32 characters: E or D, 8 digits, 12 digits and 11 of [a-zA-Z0-9]',
    });
  }
  if (typeof p.valor !== 'string' || !PIX_VALOR.test(p.valor)) {
    problems.push({ path: '/valor', message: 'must match ^\\d{1,10}\\.\\d{2}$' });
  } else if (!new Decimal(p.valor).gt(0)) {
    problems.push({ path: '/valor', message: 'must be above zero' });
  }
  if (typeof p.horario !== 'string' || !isRfc3339Instant(p.horario)) {
    problems.push({ path: '/horario', message: 'must be an RFC 3339 instant (2026-01-31T12:00:00Z)' });
  }
  if (p.txid !== undefined && typeof p.txid !== 'string') {
    problems.push({ path: '/txid', message: 'must be a string when present' });
  }
  return problems;
}

/**
 * The items of a notice body `{"pix": [...]}`, every one well formed; otherwise NoticeRejectedError 400 naming
 * every bad field (`/pix/2/valor`), so nothing of a notice with one bad item is recorded. A body that claims no Pix
 * (none, or an object without `pix`: Efí's `{"evento": "teste_webhook"}`) is a PSP testing the URL it is asked to
 * register, which it registers only once answered 2xx (decision 0261): no items.
 */
export function parseNoticeItems(body: unknown): PixItem[] {
  if (body === undefined) return [];
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  if (isObject && !('pix' in body)) return [];
  const items = isObject ? (body as { pix?: unknown }).pix : undefined;
  if (!Array.isArray(items)) {
    throw new NoticeRejectedError('a notice is {"pix": [{endToEndId, valor, horario, txid?}]}', 400, [
      { path: '/pix', message: 'must be an array of received Pix' },
    ]);
  }
  const problems = items.flatMap((item, i) =>
    pixItemProblems(item).map((p) => ({ path: `/pix/${i}${p.path}`, message: p.message })),
  );
  if (problems.length) {
    const first = problems[0];
    throw new NoticeRejectedError(`malformed notice item: ${first.path} ${first.message}`, 400, problems);
  }
  return items as PixItem[];
}

/**
 * Why the PSP's record does not confirm the notice's claim, or undefined when it does: the same end-to-end id, the
 * same `txid` (both absent, or equal) and the same `valor`.
 */
export function unconfirmed(claim: PixItem, record: PixItem): string | undefined {
  if (record.endToEndId !== claim.endToEndId) return `the PSP answered another Pix (${record.endToEndId})`;
  if ((record.txid || undefined) !== (claim.txid || undefined)) {
    return `txid differs: the notice says ${claim.txid ?? 'none'}, the PSP ${record.txid ?? 'none'}`;
  }
  if (!new Decimal(record.valor).eq(claim.valor)) {
    return `valor differs: the notice says ${claim.valor}, the PSP ${record.valor}`;
  }
  return undefined;
}
