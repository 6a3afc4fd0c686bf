// The statement writers' turns of the API's one thread. Each writer gives the thread back every few entries (decision
// 0169); when each did so with its own setImmediate, every writer ran one turn in every turn of the event loop, so
// another customer's request waited behind a turn of each stream being written: with a dozen streams, a cheap read
// that took 2 ms took hundreds. The writers now queue for one shared turn: of the turns they give back, at most one
// runs in a turn of the event loop, whatever the number of streams, in order (decision 0359). A writer resumed by I/O
// (its next page read, its socket drained) runs that turn outside the queue.
const waiting: Array<() => void> = [];
let scheduled = false;

function serveOne(): void {
  scheduled = false;
  // Resolved here, the writer's next entries run as a microtask right after this callback, before the loop turns on.
  waiting.shift()?.();
  if (waiting.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(serveOne);
}

/** Resolves in a later turn of the event loop, when this writer's turn comes: one writer's turn per loop turn. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}
