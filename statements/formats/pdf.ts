// The statement as a PDF for people, drawn by pdfkit as the entries stream: pdfkit writes each page when the next
// one starts, and the writer waits for the reader when the output backs up, so memory stays flat at any length.
import PDFDocument from 'pdfkit';
import { PassThrough, type Readable } from 'node:stream';
import { once } from 'node:events';
import { StatementTotals, type StatementSource } from '../statement';

const COLUMNS = [
  { title: 'Booked at (UTC)', x: 40, width: 130 },
  { title: 'Type', x: 170, width: 80 },
  { title: 'Direction', x: 250, width: 60 },
  { title: 'Amount', x: 310, width: 110 },
  { title: 'Balance after', x: 420, width: 130 },
];

export function statementPdf(s: StatementSource): Readable {
  const h = s.header;
  const out = new PassThrough();
  // CreationDate fixed to the period's end: the same statement renders the same file.
  const doc = new PDFDocument({
    size: 'A4',
    margin: 40,
    info: { Title: `Statement ${h.id}`, CreationDate: new Date(h.periodEnd) },
  });
  doc.pipe(out);
  void (async () => {
    try {
      doc.fontSize(16).text(`Statement of account ${h.accountId}`);
      doc.fontSize(10).text(`Asset: ${h.asset}`).text(`Period: ${h.periodStart} to ${h.periodEnd} (end excluded)`);
      doc.moveDown().text(`Opening balance: ${h.openingBalance.value} ${h.asset}`).moveDown();
      row(
        doc,
        COLUMNS.map((c) => c.title),
      );
      const totals = new StatementTotals(h.asset);
      for await (const page of s.pages) {
        for (const e of page) {
          totals.add(e);
          row(doc, [e.bookedAt, e.operationType ?? '', e.direction, e.amount.value, e.balanceAfter.value]);
        }
        if (out.writableNeedDrain) await once(out, 'drain');
      }
      doc.moveDown().text(`Closing balance: ${h.closingBalance.value} ${h.asset}`, COLUMNS[0].x);
      const { credits, debits } = totals;
      doc.text(`Credits: ${credits.count} totalling ${credits.sum.value} ${h.asset}`);
      doc.text(`Debits: ${debits.count} totalling ${debits.sum.value} ${h.asset}`);
      doc.end();
    } catch (err) {
      out.destroy(err as Error);
    }
  })();
  return out;
}

function row(doc: PDFKit.PDFDocument, cells: string[]): void {
  if (doc.y > doc.page.height - doc.page.margins.bottom - 20) doc.addPage();
  const y = doc.y;
  cells.forEach((cell, i) => doc.text(cell, COLUMNS[i].x, y, { width: COLUMNS[i].width, lineBreak: false }));
  doc.x = COLUMNS[0].x;
  doc.y = y + 14;
}
