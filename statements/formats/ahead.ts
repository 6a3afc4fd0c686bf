// One page of entries read ahead while the page before is written: the database query of page n+1 runs while page n
// is turned into text and sent, where the writer and the reader used to wait on each other. At most two pages are
// alive at once, so memory stays flat at any length.

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
