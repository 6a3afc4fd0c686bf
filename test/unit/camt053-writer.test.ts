import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { statementCamt053 } from '../../statements/formats/camt053';
import type { StatementEntry } from '../../statements/statement';
import { WRITER_DOCUMENT, WRITER_ENTRIES, writerSource } from '../helpers/camt053-entries';
import { assertValidCamt053 } from '../helpers/statement-documents';

// Written by the writer as it was before it was made faster (decision 0138): the same entries must give these bytes.
const EXPECTED = readFileSync(path.join(__dirname, '../fixtures/statements/camt053-writer.xml'), 'utf8');

async function render(pages: StatementEntry[][]): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of statementCamt053(writerSource(pages), WRITER_DOCUMENT)) chunks.push(chunk);
  return chunks;
}

describe('camt.053 writer', () => {
  it('writes every kind of entry byte for byte as before, valid against the ISO schema', async () => {
    const xml = (await render([WRITER_ENTRIES.slice(0, 7), WRITER_ENTRIES.slice(7)])).join('');
    expect(xml).to.equal(EXPECTED);
    await assertValidCamt053(xml);
  });

  it('sends a long statement in chunks of about 64 KB whatever the page, the same bytes however paged', async () => {
    // 6,000 entries, about 3 MB: as one page of 6,000 and as three of 2,000 (the API's page).
    const many = Array.from({ length: 6000 }, (_, i) => WRITER_ENTRIES[i % WRITER_ENTRIES.length]);
    const whole = await render([many]);
    const paged = await render(Array.from({ length: 3 }, (_, i) => many.slice(i * 2000, (i + 1) * 2000)));
    expect(paged.join('')).to.equal(whole.join(''));
    expect(whole.length).to.be.greaterThan(40);
    // One entry at most past the 64 KiB mark (the longest here is about 1.4 KB).
    for (const chunk of whole) expect(chunk.length).to.be.below(64 * 1024 + 2000);
  });
});
