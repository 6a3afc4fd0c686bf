// The statement as an ISO 20022 camt.053.001.08 BankToCustomerStatement, what treasury systems import, written by
// xmlbuilder2's streaming (callback) builder: each element is emitted as it is added, so the document never sits
// whole in memory. Deterministic: its creation time is the period's end, its ids derive from the statement's.
import { createCB } from 'xmlbuilder2';
import type { XMLBuilderCB } from 'xmlbuilder2/lib/interfaces';
import type { Amount } from '../../domain/money';
import type { StatementEntry, StatementSource } from '../statement';

export const CAMT053_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';

/** Identifiers are Max35Text: a UUID without its dashes (32 characters). */
export const compactId = (id: string): string => id.replace(/-/g, '');

const FLUSH_CHARS = 64 * 1024;

export async function* statementCamt053(s: StatementSource): AsyncGenerator<string> {
  const h = s.header;
  let out = '';
  const xml = createCB({ data: (chunk: string) => void (out += chunk), prettyPrint: false });
  xml.dec({ version: '1.0', encoding: 'UTF-8' }).ele(CAMT053_NAMESPACE, 'Document').ele('BkToCstmrStmt');
  xml.ele('GrpHdr').ele('MsgId').txt(compactId(h.id)).up().ele('CreDtTm').txt(h.periodEnd).up().up();
  xml.ele('Stmt').ele('Id').txt(compactId(h.id)).up().ele('CreDtTm').txt(h.periodEnd).up();
  xml.ele('FrToDt').ele('FrDtTm').txt(h.periodStart).up().ele('ToDtTm').txt(h.periodEnd).up().up();
  xml.ele('Acct').ele('Id').ele('Othr').ele('Id').txt(h.accountId).up().up().up().ele('Ccy').txt(h.asset).up().up();
  balance(xml, 'OPBD', h.openingBalance, h.periodStart);
  balance(xml, 'CLBD', h.closingBalance, h.periodEnd);
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

function balance(xml: XMLBuilderCB, code: 'OPBD' | 'CLBD', amount: Amount, at: string): void {
  xml.ele('Bal').ele('Tp').ele('CdOrPrtry').ele('Cd').txt(code).up().up().up();
  xml.ele('Amt', { Ccy: amount.asset }).txt(amount.value).up();
  // A booked balance is never negative (the ledger refuses it), so it is always a credit balance.
  xml.ele('CdtDbtInd').txt('CRDT').up();
  xml.ele('Dt').ele('DtTm').txt(at).up().up();
  xml.up();
}

function entry(xml: XMLBuilderCB, e: StatementEntry): void {
  xml.ele('Ntry');
  xml.ele('Amt', { Ccy: e.amount.asset }).txt(e.amount.value).up();
  xml
    .ele('CdtDbtInd')
    .txt(e.direction === 'CREDIT' ? 'CRDT' : 'DBIT')
    .up();
  xml.ele('Sts').ele('Cd').txt('BOOK').up().up();
  xml.ele('BookgDt').ele('DtTm').txt(e.bookedAt).up().up();
  xml.ele('AcctSvcrRef').txt(compactId(e.id)).up();
  xml
    .ele('BkTxCd')
    .ele('Prtry')
    .ele('Cd')
    .txt(e.operationType ?? 'LEDGER')
    .up()
    .ele('Issr')
    .txt('CAMBIO')
    .up()
    .up()
    .up();
  xml.ele('NtryDtls').ele('TxDtls').ele('Refs');
  if (e.operationId) xml.ele('TxId').txt(compactId(e.operationId)).up();
  if (e.endToEnd) xml.ele('EndToEndId').txt(e.endToEnd.slice(0, 35)).up();
  xml.up().ele('AddtlTxInf').txt(e.description.slice(0, 500)).up().up().up();
  xml.ele('AddtlNtryInf').txt(e.description.slice(0, 500)).up();
  xml.up();
}
