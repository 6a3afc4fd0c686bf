// What a statement's documents carry beyond the statement (../shared/spec/decisions.md, "Statements that outside
// readers accept"; decision 0113): the holder's name the PDF prints, the electronic sequence number and the
// per-document message id camt.053 carries, and the instant the document is written, which tells an open period
// (interim) from a closed one. Gathered once per document, before its first byte, by whoever renders it (the API, the
// CLI).
import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm';
import { accountHolderName, issuedStatementSequence } from '../../db/repositories/statement-documents';
import type { StatementHeader } from '../statement';

export interface StatementDocument {
  /** The account holder (its registered owner's name), on the PDF's first page and as camt.053's account owner. */
  holderName: string;
  /** ElctrncSeqNb: the statement's place among its account-asset's issued statements; null when not one of them. */
  sequence: number | null;
  /** When this document is written. */
  renderedAt: Date;
  /** camt.053 MsgId: unique per document, so an importer never takes a second download for a replay. */
  messageId: string;
}

export async function statementDocument(em: Em, header: StatementHeader): Promise<StatementDocument> {
  const [holderName, sequence] = await Promise.all([
    accountHolderName(em, header.accountId),
    issuedStatementSequence(em, header.id),
  ]);
  return { holderName: holderName ?? '', sequence, renderedAt: new Date(), messageId: randomUUID().replace(/-/g, '') };
}

/**
 * A period not yet ended when its balances were read (on the database's clock) or, for a statement read earlier
 * (an issued one), when the document is written: its figures are interim, not closing ones. Judged by the render
 * alone, a period that ended between the read and the render, or one ended by the API's clock but not yet by the
 * database's, printed as closed (CLBD) a closing balance that missed postings booked in the period.
 */
export const isInterim = (header: StatementHeader, doc: StatementDocument): boolean =>
  header.settled === false || Date.parse(header.periodEnd) > (header.readAt ?? doc.renderedAt).getTime();
