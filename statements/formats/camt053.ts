// The statement as an ISO 20022 camt.053.001.08 BankToCustomerStatement, what treasury systems import, written by
// xmlbuilder2's streaming (callback) builder: each element is emitted as it is added, so the document never sits
// whole in memory. Every document validates against the official XSD (test/fixtures/iso20022/, checked by the tests
// on every statement they render; decision 0113): what the schema cannot carry is refused before the first byte
// (an asset that is not an ISO 4217 currency) or left out (an empty text, a reference over 35 characters), and
// text is cleaned of what XML 1.0 cannot hold.
import { createCB } from 'xmlbuilder2';
import type { XMLBuilderCB } from 'xmlbuilder2/lib/interfaces';
import { FIAT_ASSETS } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import type { Amount } from '../../domain/money';
import type { StatementEntry, StatementHeader, StatementSource } from '../statement';
import { isInterim, type StatementDocument } from './document';

export const CAMT053_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';

/** Identifiers are Max35Text (an account id Max34Text): a UUID without its dashes (32 characters). */
export const compactId = (id: string): string => id.replace(/-/g, '');

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

export async function* statementCamt053(s: StatementSource, doc: StatementDocument): AsyncGenerator<string> {
  const h = s.header;
  assertCamt053Asset(h.asset);
  const interim = isInterim(h, doc);
  const renderedAt = doc.renderedAt.toISOString();
  let out = '';
  const xml = createCB({ data: (chunk: string) => void (out += chunk), prettyPrint: false });
  xml.dec({ version: '1.0', encoding: 'UTF-8' }).ele(CAMT053_NAMESPACE, 'Document').ele('BkToCstmrStmt');
  xml.ele('GrpHdr').ele('MsgId').txt(doc.messageId).up().ele('CreDtTm').txt(renderedAt).up().up();
  xml.ele('Stmt').ele('Id').txt(compactId(h.id)).up();
  if (doc.sequence !== null) xml.ele('ElctrncSeqNb').txt(String(doc.sequence)).up();
  // A closed period's statement was made when the period closed; an open one's is as of now.
  xml
    .ele('CreDtTm')
    .txt(interim ? renderedAt : h.periodEnd)
    .up();
  xml.ele('FrToDt').ele('FrDtTm').txt(h.periodStart).up().ele('ToDtTm').txt(h.periodEnd).up().up();
  account(xml, h, doc);
  balance(xml, 'OPBD', h.openingBalance, h.periodStart);
  if (interim) balance(xml, 'ITBD', h.closingBalance, renderedAt);
  else balance(xml, 'CLBD', h.closingBalance, h.periodEnd);
  for await (const page of s.pages) {
    for (const e of page) entry(xml, e);
    if (out.length >= FLUSH_CHARS) {
      yield out;
      out = '';
    }
  }
  xml.up().up().up().end();
  yield out;
}

function account(xml: XMLBuilderCB, h: StatementHeader, doc: StatementDocument): void {
  xml.ele('Acct').ele('Id').ele('Othr').ele('Id').txt(compactId(h.accountId)).up();
  xml.ele('SchmeNm').ele('Prtry').txt(ISSUER).up().up().up().up();
  xml.ele('Ccy').txt(h.asset).up();
  const owner = schemaText(doc.holderName, 140);
  if (owner) xml.ele('Ownr').ele('Nm').txt(owner).up().up();
  xml.up();
}

function balance(xml: XMLBuilderCB, code: 'OPBD' | 'CLBD' | 'ITBD', amount: Amount, at: string): void {
  xml.ele('Bal').ele('Tp').ele('CdOrPrtry').ele('Cd').txt(code).up().up().up();
  xml.ele('Amt', { Ccy: amount.asset }).txt(amount.value).up();
  // A booked balance is never negative (the ledger refuses it), so it is always a credit balance.
  xml.ele('CdtDbtInd').txt('CRDT').up();
  xml.ele('Dt').ele('DtTm').txt(at).up().up();
  xml.up();
}

function entry(xml: XMLBuilderCB, e: StatementEntry): void {
  const ref = compactId(e.id);
  xml.ele('Ntry').ele('NtryRef').txt(ref).up();
  xml.ele('Amt', { Ccy: e.amount.asset }).txt(e.amount.value).up();
  xml
    .ele('CdtDbtInd')
    .txt(e.direction === 'CREDIT' ? 'CRDT' : 'DBIT')
    .up();
  xml.ele('Sts').ele('Cd').txt('BOOK').up().up();
  xml.ele('BookgDt').ele('DtTm').txt(e.bookedAt).up().up();
  // The ledger books and values in the same instant: a posting is available when it is booked.
  xml.ele('ValDt').ele('DtTm').txt(e.bookedAt).up().up();
  xml.ele('AcctSvcrRef').txt(ref).up();
  const [domain, family, subFamily] = bankTransactionCode(e);
  xml.ele('BkTxCd').ele('Domn').ele('Cd').txt(domain).up();
  xml.ele('Fmly').ele('Cd').txt(family).up().ele('SubFmlyCd').txt(subFamily).up().up().up();
  xml
    .ele('Prtry')
    .ele('Cd')
    .txt(reference(e.operationType) ?? 'LEDGER')
    .up()
    .ele('Issr')
    .txt(ISSUER)
    .up()
    .up()
    .up();
  const endToEnd = reference(e.endToEnd);
  const operation = e.operationId ? compactId(e.operationId) : null;
  const info = schemaText(e.description, 500);
  if (endToEnd || operation || info) {
    xml.ele('NtryDtls').ele('TxDtls');
    if (endToEnd || operation) {
      // TransactionReferences6 order: EndToEndId, then (UETR,) TxId.
      xml.ele('Refs');
      if (endToEnd) xml.ele('EndToEndId').txt(endToEnd).up();
      if (operation) xml.ele('TxId').txt(operation).up();
      xml.up();
    }
    if (info) xml.ele('AddtlTxInf').txt(info).up();
    xml.up().up();
  }
  if (info) xml.ele('AddtlNtryInf').txt(info).up();
  xml.up();
}
