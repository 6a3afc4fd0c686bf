// One page of entries read ahead while the page before is written: the database query of page n+1 runs while page n
// is turned into text and sent, where the writer and the reader used to wait on each other. At most two pages are
// alive at once, so memory stays flat at any length.
import { nextTurn } from './turns';

/** The same items in order, the next one always requested before the current one is handed on. */
export async function* readAhead<T>(items: AsyncIterable<T>): AsyncGenerator<T> {
  const it = items[Symbol.asyncIterator]();
  let next = it.next();
  try {
    for (;;) {
      const current = await next;
      if (current.done) return;
      next = it.next();
      // A consumer that stops early leaves `next` pending: its failure is nobody's to report.
      next.catch(() => undefined);
      yield current.value;
    }
  } finally {
    await it.return?.();
  }
}

/**
 * The same items with the first one already read: a failure to read it (Postgres gone or a lock past its timeout after
 * the statement's header was read) is thrown to the caller while the response can still be a 503. Read as the body
 * streams, it came after the 200 was committed to and the client saw only a dropped connection (decision 0247).
 */
export async function primed<T>(items: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const it = items[Symbol.asyncIterator]();
  const first = await it.next();
  return (async function* () {
    try {
      if (first.done) return;
      yield first.value;
      for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
    } finally {
      await it.return?.();
    }
  })();
}

// Entries written between two turns of the event loop by the text formats (JSON, CSV): a few hundred microseconds of
// CPU. A page of 2,000 written in one go held the API's one thread for each of a customer's streams in turn, and
// another customer's request waited behind all of them (decision 0169, amended).
export const ENTRIES_PER_TURN = 200;

/** Lets the event loop turn once every ENTRIES_PER_TURN entries written (`written` counts them). */
export const turnEvery = async (written: number): Promise<void> => {
  if (written % ENTRIES_PER_TURN === 0) await nextTurn();
};
