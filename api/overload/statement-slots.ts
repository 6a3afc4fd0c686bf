import { type StreamLimits, StreamSlots } from './stream-slots';

// A PDF is drawn on the API's one thread, about half a millisecond of CPU an entry, and keeps its document's objects
// until it ends: four drawn at once keep a core busy; more only share it slower and hold more heap. Twelve at once
// (three customers' four each) ran the 128 MB heap out, and the process with every customer's requests (decision 0357).
const PDF_SLOTS = { max: 4, perCustomer: 2 };

/** This process's statements being written (decision 0251), and of them the PDFs being drawn (0357). */
export class StatementSlots {
  private readonly streams: StreamSlots;
  private readonly pdfs: StreamSlots;

  /** `limits`: every statement's (STATEMENT_STREAMS_MAX, _PER_CUSTOMER); a PDF's wait is the same. */
  constructor(limits: StreamLimits) {
    this.streams = new StreamSlots(limits);
    this.pdfs = new StreamSlots({ ...PDF_SLOTS, waitMs: limits.waitMs, label: 'PDF statements' });
  }

  /** A stream's slot (a PDF's first); the release gives back both. Refused as StreamSlots refuses. */
  async take(customerId: string, kind: { pdf: boolean }): Promise<() => void> {
    const releasePdf = kind.pdf ? await this.pdfs.take(customerId) : () => {};
    try {
      const releaseStream = await this.streams.take(customerId);
      return () => {
        releaseStream();
        releasePdf();
      };
    } catch (err) {
      releasePdf();
      throw err;
    }
  }
}
