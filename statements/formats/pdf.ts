// The statement as a PDF for people (../shared/spec/decisions.md, "Statements that outside readers accept"; decision
// 0113), drawn by pdfkit as the entries stream: pdfkit writes each page when the next one starts, and the writer waits
// for the reader when the output backs up, so memory stays flat at any length.
//
// Page one: the holder, the account, the asset, the period, the opening and closing balances and the totals per
// direction. Every page: a running head (holder, account, asset), the column headings, "Page N of M" at its foot.
// Each entry is one row of fixed height: its date over its time, its description over its operation type, its
// end-to-end reference (on two lines when long), its signed amount and the balance after, both right-aligned. Text
// that would not fit its column is cut with an ellipsis, so rows never run into each other; a figure never is: one too
// long for its column is drawn smaller.
//
// Two figures are known only once the last entry is drawn: the totals (on page one) and M (on every page). Each is a
// form XObject that every page refers to and that is written at the end, once known, as a PDF may refer to an
// object before it appears; the pages stay streamed, never held back.
//
// The font is Noto Sans (@expo-google-fonts/noto-sans, OFL), embedded and subset: accents and any Latin, Greek or
// Cyrillic name print.
import { create } from 'fontkit';
import { readFileSync } from 'node:fs';
import PDFDocument from 'pdfkit';
import { PassThrough, type Readable } from 'node:stream';
import { once } from 'node:events';
import { StatementTotals, type StatementEntry, type StatementHeader, type StatementSource } from '../statement';
import { isInterim, type StatementDocument } from './document';
import { nextTurn } from './turns';

// The two faces parsed once per process and shared by every document (pdfkit takes a fontkit font as it takes a
// file; each document still subsets its own glyphs). Parsed per document, a PDF cost about three times the heap and
// twice the CPU: a dozen drawn at once ran the API's 128 MB heap out (decision 0357).
// (pdfkit's typings name only a path or bytes; its code takes a font.)
const face = (file: string): string => create(readFileSync(require.resolve(file))) as unknown as string;
const REGULAR = face('@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf');
const BOLD = face('@expo-google-fonts/noto-sans/700Bold/NotoSans_700Bold.ttf');

const MARGIN = 40;
const SIZE = 8;
const LINE = 10.5;
const ROW = 2 * LINE + 4;
const GREY = '#555555';
// Entries drawn between two turns of the event loop: about a printed page, a few milliseconds of CPU.
const ENTRIES_PER_TURN = 25;

interface Column {
  title: string;
  x: number;
  width: number;
  align: 'left' | 'right';
}

// A4 is 595 pt wide: 40 to 555.
const COLUMNS: Record<'date' | 'description' | 'reference' | 'amount' | 'balance', Column> = {
  date: { title: 'Date (UTC)', x: MARGIN, width: 62, align: 'left' },
  description: { title: 'Description', x: 108, width: 160, align: 'left' },
  reference: { title: 'End-to-end reference', x: 274, width: 116, align: 'left' },
  amount: { title: 'Amount', x: 396, width: 74, align: 'right' },
  balance: { title: 'Balance after', x: 476, width: 79, align: 'right' },
};

/** The parts of pdfkit's embedded font this file uses (not in its typings). */
interface PdfFont {
  id: string;
  ascender: number;
  ref(): unknown;
  encode(text: string): [string[], unknown];
  /** fontkit's font, the subset being embedded, and what pdfkit records per subset glyph (encode() fills them). */
  font: { glyphForCodePoint(codePoint: number): { id: number; advanceWidth: number; codePoints: number[] } };
  subset: { includeGlyph(glyphId: number): number };
  widths: number[];
  unicode: number[][];
  scale: number;
}
type Doc = PDFKit.PDFDocument & {
  _font: PdfFont;
  ref(data: object): { end(data: string): void };
  page: { fonts: Record<string, unknown> };
};

/**
 * The entries' text, written straight into the page as glyphs of the embedded font, one code point to one glyph.
 * pdfkit's text() shapes every string with fontkit (about 0.4 ms a call here), several per entry: a statement of
 * thousands of entries took minutes. A table of dates, amounts and names needs no shaping (no ligature, no
 * kerning); widths come from the same advances, so what is measured is what is drawn. pdfkit still embeds the
 * subset, its widths and the ToUnicode map, from the glyphs recorded here as its own encode() records them.
 */
class Glyphs {
  private readonly cache = new Map<number, { hex: string; advance: number }>();

  constructor(readonly font: PdfFont) {}

  private glyph(codePoint: number): { hex: string; advance: number } {
    let g = this.cache.get(codePoint);
    if (!g) {
      const f = this.font;
      const glyph = f.font.glyphForCodePoint(codePoint);
      const gid = f.subset.includeGlyph(glyph.id);
      const advance = glyph.advanceWidth * f.scale;
      f.widths[gid] ??= advance;
      f.unicode[gid] ??= glyph.codePoints.length > 0 ? glyph.codePoints : [codePoint];
      g = { hex: gid.toString(16).padStart(4, '0'), advance };
      this.cache.set(codePoint, g);
    }
    return g;
  }

  width(text: string, size: number): number {
    let w = 0;
    for (const ch of text) w += this.glyph(ch.codePointAt(0)!).advance;
    return (w * size) / 1000;
  }

  /** Draws `text` with its top at y (as pdfkit's text() takes it), in the current fill colour. */
  draw(doc: Doc, text: string, x: number, y: number, size: number): void {
    if (text === '') return;
    let hex = '';
    for (const ch of text) hex += this.glyph(ch.codePointAt(0)!).hex;
    const baseline = y + (this.font.ascender / 1000) * size;
    doc.page.fonts[this.font.id] = this.font.ref();
    // The page's user space runs downwards (pdfkit flips it): the text matrix flips the glyphs back upright.
    doc.addContent(`BT /${this.font.id} ${size} Tf 1 0 0 -1 ${num(x)} ${num(baseline)} Tm <${hex}> Tj ET`);
  }
}

const num = (n: number): string => String(Math.round(n * 100) / 100);

/**
 * A text drawn where its value is not yet known: each page that shows it refers to one form XObject, written by
 * `set` once the value is known (before the document ends).
 */
class Deferred {
  private readonly ref: { end(data: string): void };
  private readonly font: PdfFont;

  constructor(
    private readonly doc: Doc,
    private readonly name: string,
    private readonly size: number,
  ) {
    this.font = doc._font;
    this.ref = doc.ref({
      Type: 'XObject',
      Subtype: 'Form',
      BBox: [0, -size, 400, size * 2],
      Resources: { Font: { [this.font.id]: this.font.ref() } },
    });
  }

  /** Shows the text at (x, y), y the top of the line as pdfkit's own text takes it, in the deferred font. */
  place(x: number, y: number): void {
    const baseline = y + (this.font.ascender / 1000) * this.size;
    (this.doc.page as unknown as { xobjects: Record<string, unknown> }).xobjects[this.name] = this.ref;
    this.doc.addContent(`q 1 0 0 -1 ${x} ${baseline} cm /${this.name} Do Q`);
  }

  set(text: string): void {
    const [glyphs] = this.font.encode(text);
    this.ref.end(`BT /${this.font.id} ${this.size} Tf 0 0 Td <${glyphs.join('')}> Tj ET`);
  }
}

const at = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

export function statementPdf(s: StatementSource, statementDoc: StatementDocument): Readable {
  const h = s.header;
  const out = new PassThrough();
  // CreationDate fixed to the period's end: the same closed statement renders the same file.
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    font: REGULAR,
    // pdfkit keeps every word it lays out in an embedded font's cache, for the document's life: with a date, an
    // amount and a balance per entry, that grows with the statement. Off, memory stays flat.
    fontLayoutCache: false,
    info: { Title: `Statement ${h.id}`, CreationDate: new Date(h.periodEnd) },
  }) as Doc;
  doc.registerFont('regular', REGULAR).registerFont('bold', BOLD);
  doc.pipe(out);
  void (async () => {
    try {
      const page = new Pages(doc, h, statementDoc);
      const totals = new StatementTotals(h.asset);
      const credits = firstPage(doc, h, statementDoc);
      page.headings();
      for await (const entries of s.pages) {
        for (const [i, e] of entries.entries()) {
          totals.add(e);
          page.entry(e);
          // Drawing is CPU on the API's one thread: a page of the source (2,000 entries) drawn at once held every
          // other request, every customer's, for seconds. Other work runs between turns (decision 0169).
          if ((i + 1) % ENTRIES_PER_TURN === 0) await nextTurn();
          // The reader went away (Koa destroys the body when the client closes the connection): leaving the loop
          // closes the source, so no further page is read from the database or drawn into memory for nobody.
          if (out.destroyed) return;
        }
        if (out.writableNeedDrain) await drainedOrClosed(out);
        if (out.destroyed) return;
      }
      if (totals.credits.count + totals.debits.count === 0) {
        doc
          .font('regular')
          .fontSize(SIZE)
          .fillColor(GREY)
          .text('No entries in this period.', MARGIN, doc.y + 4);
      }
      credits.credits.set(`${totals.credits.count} totalling ${totals.credits.sum.value} ${h.asset}`);
      credits.debits.set(`${totals.debits.count} totalling ${totals.debits.sum.value} ${h.asset}`);
      page.finish();
      doc.end();
    } catch (err) {
      out.destroy(err as Error);
    }
  })();
  return out;
}

/** Resolves when `out` drains or is destroyed: a stream whose reader went away never drains. */
async function drainedOrClosed(out: PassThrough): Promise<void> {
  const stop = new AbortController();
  const either = [once(out, 'drain', { signal: stop.signal }), once(out, 'close', { signal: stop.signal })];
  await Promise.race(either).finally(() => stop.abort());
}

/** The summary at the top of page one; the totals' values are deferred. */
function firstPage(doc: Doc, h: StatementHeader, sd: StatementDocument): { credits: Deferred; debits: Deferred } {
  doc
    .font('bold')
    .fontSize(16)
    .fillColor('black')
    .text('Account statement', MARGIN, MARGIN + 14);
  doc.moveDown(0.4);
  const interim = isInterim(h, sd);
  const renderedAt = sd.renderedAt.toISOString();
  const closing = interim
    ? `${h.closingBalance.value} ${h.asset} (interim: the period has not ended; as of ${at(renderedAt)})`
    : `${h.closingBalance.value} ${h.asset}`;
  const lines: Array<[string, string]> = [
    ['Account holder', sd.holderName],
    ['Account', h.accountId],
    ['Asset', h.asset],
    ['Period', `${at(h.periodStart)} to ${at(h.periodEnd)} (end excluded)`],
    ['Opening balance', `${h.openingBalance.value} ${h.asset}`],
    ['Closing balance', closing],
  ];
  const labelWidth = 100;
  const valueWidth = 595.28 - 2 * MARGIN - labelWidth;
  const row = (label: string, value: string | null): number => {
    const y = doc.y;
    doc.font('bold').fontSize(10).fillColor('black').text(`${label}:`, MARGIN, y, { lineBreak: false });
    if (value !== null) {
      doc.font('regular').text(
        fit((t) => doc.widthOfString(t), value, valueWidth),
        MARGIN + labelWidth,
        y,
        { lineBreak: false },
      );
    }
    doc.y = y + 14;
    return y;
  };
  for (const [label, value] of lines) row(label, value);
  doc.font('regular').fontSize(10);
  const credits = new Deferred(doc, 'TotalCredits', 10);
  const debits = new Deferred(doc, 'TotalDebits', 10);
  credits.place(MARGIN + labelWidth, row('Credits', null));
  debits.place(MARGIN + labelWidth, row('Debits', null));
  doc.y += 10;
  return { credits, debits };
}

/** The entries' pages: the running head and the headings on each, its number, and the rows. */
class Pages {
  private n = 1;
  private readonly total: Deferred;
  private readonly head: string;
  private readonly glyphs: Glyphs;

  constructor(
    private readonly doc: Doc,
    private readonly h: StatementHeader,
    sd: StatementDocument,
  ) {
    doc.font('regular').fontSize(SIZE);
    this.glyphs = new Glyphs(doc._font);
    this.total = new Deferred(doc, 'PageCount', SIZE);
    const minutes = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
    const period = `${minutes(h.periodStart)} to ${minutes(h.periodEnd)} UTC`;
    this.head = `${sd.holderName} · Account ${h.accountId} · ${h.asset} · ${period}`;
    this.frame();
  }

  /** The running head and the foot of the current page. */
  private frame(): void {
    const doc = this.doc;
    const bottom = doc.page.height - MARGIN + 6;
    doc.font('regular').fontSize(SIZE).fillColor(GREY);
    doc.text(
      fit((t) => doc.widthOfString(t), this.head, doc.page.width - 2 * MARGIN),
      MARGIN,
      MARGIN - 16,
      { lineBreak: false },
    );
    doc.text(`Account ${this.h.accountId} · ${this.h.asset}`, MARGIN, bottom, { lineBreak: false });
    const label = `Page ${this.n} of `;
    const x = doc.page.width - MARGIN - 60;
    doc.text(label, x, bottom, { lineBreak: false });
    doc.font('regular').fontSize(SIZE);
    this.total.place(x + doc.widthOfString(label), bottom);
    doc.fillColor('black');
  }

  headings(): void {
    const doc = this.doc;
    const y = doc.y;
    doc.font('bold').fontSize(SIZE).fillColor('black');
    for (const c of Object.values(COLUMNS)) {
      const x = c.align === 'right' ? c.x + c.width - doc.widthOfString(c.title) : c.x;
      doc.text(c.title, x, y, { lineBreak: false });
    }
    const line = y + LINE + 2;
    doc
      .moveTo(MARGIN, line)
      .lineTo(doc.page.width - MARGIN, line)
      .lineWidth(0.5)
      .strokeColor(GREY)
      .stroke();
    doc.y = line + 4;
  }

  entry(e: StatementEntry): void {
    const doc = this.doc;
    if (doc.y + ROW > doc.page.height - MARGIN - 12) {
      doc.addPage();
      this.n++;
      this.frame();
      doc.y = MARGIN + 4;
      this.headings();
    }
    const y = doc.y;
    const g = this.glyphs;
    doc.fillColor('black');
    cell(doc, g, COLUMNS.date, e.bookedAt.slice(0, 10), y);
    cell(doc, g, COLUMNS.date, e.bookedAt.slice(11, 19), y + LINE);
    cell(doc, g, COLUMNS.description, e.description || '—', y);
    const sign = e.direction === 'CREDIT' ? '+' : '-';
    figure(doc, g, COLUMNS.amount, `${sign}${e.amount.value}`, y);
    figure(doc, g, COLUMNS.balance, e.balanceAfter.value, y);
    const [first, second] = twoLines(g, e.endToEnd ?? '', COLUMNS.reference.width);
    cell(doc, g, COLUMNS.reference, first, y);
    if (second) cell(doc, g, COLUMNS.reference, second, y + LINE);
    doc.fillColor(GREY);
    cell(doc, g, COLUMNS.description, e.operationType ?? 'Ledger posting', y + LINE);
    doc.y = y + ROW;
  }

  finish(): void {
    this.doc.font('regular').fontSize(SIZE);
    this.total.set(String(this.n));
  }
}

/** One line of a column (an entry's), cut to its width, at its alignment, in the regular font at SIZE. */
function cell(doc: Doc, g: Glyphs, c: Column, text: string, y: number): void {
  const shown = fit((t) => g.width(t, SIZE), text, c.width);
  const x = c.align === 'right' ? c.x + c.width - g.width(shown, SIZE) : c.x;
  g.draw(doc, shown, x, y, SIZE);
}

/**
 * A figure (an amount, a balance) right-aligned in its column, always whole: cut with an ellipsis as text is, a
 * 123,456,789.123456 USDC deposit printed as "+123456789.1234…". One too wide for the column at SIZE (more than about
 * fifteen characters) is drawn smaller, just small enough to fit, on the same baseline.
 */
function figure(doc: Doc, g: Glyphs, c: Column, text: string, y: number): void {
  const width = g.width(text, SIZE);
  const size = width <= c.width ? SIZE : Math.floor(((SIZE * c.width) / width) * 100) / 100;
  const ascent = g.font.ascender / 1000;
  g.draw(doc, text, c.x + c.width - g.width(text, size), y + ascent * (SIZE - size), size);
}

/**
 * The text, or its longest start that fits `width` with an ellipsis; one line (line breaks become spaces).
 * `measure` is the width of a text in the font and size it is drawn in.
 */
function fit(measure: (text: string) => number, text: string, width: number): string {
  // Composed (NFC): an accent typed as a separate combining mark becomes its letter's own glyph.
  // eslint-disable-next-line no-control-regex -- a control character is what is replaced
  const flat = text.normalize('NFC').replace(/[\u0000-\u001F\u007F-\u009F]+/g, ' ');
  if (measure(flat) <= width) return flat;
  const chars = Array.from(flat);
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(`${chars.slice(0, mid).join('')}…`) <= width) lo = mid;
    else hi = mid - 1;
  }
  return `${chars.slice(0, lo).join('').trimEnd()}…`;
}

/** A reference split over two lines of `width` where it must be (it has no spaces to break at). */
function twoLines(g: Glyphs, text: string, width: number): [string, string | null] {
  if (g.width(text, SIZE) <= width) return [text, null];
  const chars = Array.from(text);
  let n = chars.length;
  while (n > 1 && g.width(chars.slice(0, n).join(''), SIZE) > width) n--;
  return [chars.slice(0, n).join(''), fit((t) => g.width(t, SIZE), chars.slice(n).join(''), width)];
}
