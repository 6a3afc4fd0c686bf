// The statement as an ISO 20022 camt.053.001.08 BankToCustomerStatement, what treasury systems import, written as
// text a page of entries at a time, so the document never sits whole in memory. Written by hand rather than by
// xmlbuilder2's callback builder, which slowed as the document grew (a million entries had not finished after ten
// minutes of bench:statements); the document's shape is fixed. Every document validates against the official XSD
// (test/fixtures/iso20022/, checked by the tests on every statement they render; decision 0113): what the schema
// cannot carry is refused before the first byte (an asset that is not an ISO 4217 currency) or left out (an empty
// text, a reference over 35 characters), and text is cleaned of what XML 1.0 cannot hold.
import { FIAT_ASSETS } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import type { Amount } from '../../domain/money';
import type { StatementEntry, StatementHeader, StatementSource } from '../statement';
import { isInterim, type StatementDocument } from './document';
import { readAhead } from './ahead';

export const CAMT053_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';

/** Identifiers are Max35Text (an account id Max34Text): a UUID without its dashes (32 characters). */
export const compactId = (id: string): string => id.replace(/-/g, '');

// A chunk is sent once it passes 64 Ki characters, checked after each entry. Checked after each page (2,000 entries,
// 1 MB of camt.053) every chunk was a string too large for V8's young generation: under the API's 128 MB old space
// (scripts/lib/node-args.js) each one hastened a full collection, and collecting took 40 % of the API's time.
const FLUSH_CHARS = 64 * 1024;
const ISSUER = 'CAMBIO';

// camt.053 amounts are ActiveOrHistoricCurrencyAndAmount: an ISO 4217 code ([A-Z]{3}) and at most 5 decimals. The
// fiat assets are ISO 4217 currencies at 2 decimals; a stablecoin (USDC, 6 decimals) is neither.
const ISO_4217: ReadonlySet<string> = new Set(FIAT_ASSETS);
export const CAMT053_ALTERNATIVES = ['json', 'csv', 'pdf'] as const;

/** 422 FORMAT_NOT_SUPPORTED for an asset camt.053 cannot carry; checked before anything is read or sent. */
export function assertCamt053Asset(asset: string): void {
  if (ISO_4217.has(asset)) return;
  throw new CambioError(
    'FORMAT_NOT_SUPPORTED',
    `${asset} is not an ISO 4217 currency, so it has no camt.053 form; ask for json, csv or pdf`,
    { format: 'camt053', asset, supportedFormats: [...CAMT053_ALTERNATIVES] },
  );
}

// What XML 1.0 cannot carry (C0 controls but tab, LF and CR; U+FFFE, U+FFFF; a lone surrogate), with the C1
// controls and DEL, which it can but an importer should not meet: each becomes a space.
const NOT_TEXT =
  // eslint-disable-next-line no-control-regex -- the control characters are what it finds
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Free text as a MaxNText: cleaned, trimmed, cut to `max` characters (code points, never half a pair); null when
 * nothing is left, since every MaxNText has a minimum length of 1 and the element is then left out.
 */
export function schemaText(value: string | null | undefined, max: number): string | null {
  if (!value) return null;
  let text = value.replace(NOT_TEXT, ' ').trim();
  if (text.length > max) text = Array.from(text).slice(0, max).join('').trimEnd();
  return text === '' ? null : text;
}

/** A reference (Max35Text) printed whole or not at all: a cut reference would name something else. */
const reference = (value: string | null | undefined): string | null => {
  const text = schemaText(value, Number.MAX_SAFE_INTEGER);
  return text !== null && Array.from(text).length <= 35 ? text : null;
};

type Code = readonly [domain: string, family: string, subFamily: string];

/**
 * The ISO bank transaction code (Domn) of an entry: PMNT with RCDT for a received credit transfer (a deposit) and
 * ICDT for an issued one (a withdrawal), the reverse direction being its return (RRTN); FORX for a swap leg; ACMT
 * for a transfer between accounts of the engine and for a posting of no operation. Our own code is beside it in
 * Prtry.
 */
export function bankTransactionCode(e: Pick<StatementEntry, 'operationType' | 'direction'>): Code {
  const credit = e.direction === 'CREDIT';
  switch (e.operationType) {
    case 'DEPOSIT':
      return ['PMNT', 'RCDT', credit ? 'OTHR' : 'RRTN'];
    case 'WITHDRAWAL':
      return ['PMNT', 'ICDT', credit ? 'RRTN' : 'OTHR'];
    case 'SWAP':
      return ['FORX', 'SPOT', 'OTHR'];
    default:
      return ['ACMT', credit ? 'ACOP' : 'ADOP', 'OTHR'];
  }
}

/** Text content: `&`, `<` and `>` escaped (the values are already schemaText-clean). */
const esc = (text: string): string =>
  /[&<>]/.test(text) ? text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : text;

const el = (name: string, text: string): string => `<${name}>${esc(text)}</${name}>`;

export async function* statementCamt053(s: StatementSource, doc: StatementDocument): AsyncGenerator<string> {
  const h = s.header;
  assertCamt053Asset(h.asset);
  const interim = isInterim(h, doc);
  const renderedAt = doc.renderedAt.toISOString();
  let out =
    `<?xml version="1.0" encoding="UTF-8"?><Document xmlns="${CAMT053_NAMESPACE}"><BkToCstmrStmt>` +
    `<GrpHdr>${el('MsgId', doc.messageId)}${el('CreDtTm', renderedAt)}</GrpHdr>` +
    `<Stmt>${el('Id', compactId(h.id))}` +
    (doc.sequence !== null ? el('ElctrncSeqNb', String(doc.sequence)) : '') +
    // A closed period's statement was made when the period closed; an open one's is as of now.
    el('CreDtTm', interim ? renderedAt : h.periodEnd) +
    `<FrToDt>${el('FrDtTm', h.periodStart)}${el('ToDtTm', h.periodEnd)}</FrToDt>` +
    account(h, doc) +
    balance('OPBD', h.openingBalance, h.periodStart) +
    (interim ? balance('ITBD', h.closingBalance, renderedAt) : balance('CLBD', h.closingBalance, h.periodEnd));
  for await (const page of readAhead(s.pages)) {
    for (const e of page) {
      out += entry(e);
      if (out.length < FLUSH_CHARS) continue;
      yield out;
      out = '';
    }
  }
  yield `${out}</Stmt></BkToCstmrStmt></Document>`;
}

function account(h: StatementHeader, doc: StatementDocument): string {
  const owner = schemaText(doc.holderName, 140);
  return (
    `<Acct><Id><Othr>${el('Id', compactId(h.accountId))}<SchmeNm>${el('Prtry', ISSUER)}</SchmeNm></Othr></Id>` +
    `${el('Ccy', h.asset)}${owner ? `<Ownr>${el('Nm', owner)}</Ownr>` : ''}</Acct>`
  );
}

function balance(code: 'OPBD' | 'CLBD' | 'ITBD', amount: Amount, at: string): string {
  // A booked balance is never negative (the ledger refuses it), so it is always a credit balance.
  return (
    `<Bal><Tp><CdOrPrtry>${el('Cd', code)}</CdOrPrtry></Tp><Amt Ccy="${amount.asset}">${amount.value}</Amt>` +
    `<CdtDbtInd>CRDT</CdtDbtInd><Dt>${el('DtTm', at)}</Dt></Bal>`
  );
}

function entry(e: StatementEntry): string {
  const ref = compactId(e.id);
  const [domain, family, subFamily] = bankTransactionCode(e);
  const endToEnd = reference(e.endToEnd);
  const operation = e.operationId ? compactId(e.operationId) : null;
  const info = schemaText(e.description, 500);
  // TransactionReferences6 order: EndToEndId, then (UETR,) TxId. The description is the entry's (AddtlNtryInf) only:
  // repeated as AddtlTxInf it added a tenth to every entry's bytes and nothing an importer reads.
  const details =
    endToEnd || operation
      ? `<NtryDtls><TxDtls><Refs>${endToEnd ? el('EndToEndId', endToEnd) : ''}` +
        `${operation ? el('TxId', operation) : ''}</Refs></TxDtls></NtryDtls>`
      : '';
  return (
    `<Ntry><NtryRef>${ref}</NtryRef><Amt Ccy="${e.amount.asset}">${e.amount.value}</Amt>` +
    `<CdtDbtInd>${e.direction === 'CREDIT' ? 'CRDT' : 'DBIT'}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>` +
    // The ledger books and values in the same instant: a posting is available when it is booked.
    `<BookgDt><DtTm>${e.bookedAt}</DtTm></BookgDt><ValDt><DtTm>${e.bookedAt}</DtTm></ValDt>` +
    `<AcctSvcrRef>${ref}</AcctSvcrRef>` +
    `<BkTxCd><Domn><Cd>${domain}</Cd><Fmly><Cd>${family}</Cd><SubFmlyCd>${subFamily}</SubFmlyCd></Fmly></Domn>` +
    `<Prtry>${el('Cd', reference(e.operationType) ?? 'LEDGER')}<Issr>${ISSUER}</Issr></Prtry></BkTxCd>` +
    `${details}${info ? el('AddtlNtryInf', info) : ''}</Ntry>`
  );
}
