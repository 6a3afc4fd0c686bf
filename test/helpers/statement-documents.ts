// What an outside reader checks in a statement's documents (decision 0113): a camt.053 against the official ISO
// 20022 schema kept with the tests (test/fixtures/iso20022/), and a PDF's text with its positions, as a viewer
// lays it out. Both run here with what npm installed: libxml2's xmllint compiled to WebAssembly (xmllint-wasm) and
// Mozilla's pdf.js (pdfjs-dist), so a fresh machine needs nothing else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateXML } from 'xmllint-wasm';

const XSD = {
  fileName: 'camt.053.001.08.xsd',
  contents: readFileSync(join(__dirname, '../fixtures/iso20022/camt.053.001.08.xsd'), 'utf8'),
};

/** The schema's complaints about a camt.053 document (an empty list when it is valid and well-formed). */
export async function camt053Errors(xml: string): Promise<string[]> {
  const result = await validateXML({ xml: { fileName: 'statement.xml', contents: xml }, schema: XSD });
  return result.valid ? [] : result.errors.map((e) => e.message);
}

/** Throws, naming each complaint, unless the document validates. */
export async function assertValidCamt053(xml: string): Promise<void> {
  const errors = await camt053Errors(xml);
  if (errors.length > 0) throw new Error(`camt.053 invalid against the XSD:\n${errors.join('\n')}`);
}

export interface PdfText {
  str: string;
  /** Left edge and baseline, in points from the bottom-left corner. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PdfPage {
  items: PdfText[];
  /** The page's lines, top to bottom: the items of one baseline, left to right, joined by a space. */
  lines: string[];
}

/** Every page's text items with their positions, as pdf.js reads them. */
export async function pdfPages(bytes: Buffer): Promise<PdfPage[]> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({ data: new Uint8Array(bytes), disableFontFace: true, verbosity: 0 }).promise;
  const pages: PdfPage[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    const items: PdfText[] = [];
    for (const it of content.items) {
      if (!('str' in it) || it.str.trim() === '') continue;
      items.push({ str: it.str, x: it.transform[4], y: it.transform[5], width: it.width, height: it.height });
    }
    const rows = new Map<number, PdfText[]>();
    for (const it of items) {
      const key = Math.round(it.y);
      rows.set(key, [...(rows.get(key) ?? []), it]);
    }
    const lines = [...rows.entries()]
      .sort(([a], [b]) => b - a)
      .map(([, row]) =>
        row
          .sort((a, b) => a.x - b.x)
          .map((i) => i.str.trim())
          .join(' '),
      );
    pages.push({ items, lines });
  }
  await doc.destroy();
  return pages;
}

/** Pairs of text items whose boxes (baseline - 25% to baseline + 80% of the size) overlap on a page. */
export function overlaps(page: PdfPage): Array<[string, string]> {
  const box = (i: PdfText) => ({ x0: i.x, x1: i.x + i.width, y0: i.y - 0.25 * i.height, y1: i.y + 0.8 * i.height });
  const found: Array<[string, string]> = [];
  const eps = 0.3;
  for (let i = 0; i < page.items.length; i++) {
    for (let j = i + 1; j < page.items.length; j++) {
      const a = box(page.items[i]);
      const b = box(page.items[j]);
      if (a.x0 < b.x1 - eps && b.x0 < a.x1 - eps && a.y0 < b.y1 - eps && b.y0 < a.y1 - eps) {
        found.push([page.items[i].str, page.items[j].str]);
      }
    }
  }
  return found;
}
