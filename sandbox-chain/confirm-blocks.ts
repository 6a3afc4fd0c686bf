// Anvil mines a block for each transaction and none otherwise: on a quiet sandbox chain a transaction never gained
// the EVM_CONFIRMATIONS blocks Cambio waits for, so a WALLET payout or a CRYPTO return stayed PROCESSING. After each
// block that holds transactions this mines as many empty blocks as confirm it, at once; an idle chain mines nothing,
// so the state file `npm start` keeps does not grow while nothing happens (decision 0271).
import { createTestClient, http, type PublicClient } from 'viem';

/** Polls the head every `everyMs` and confirms new transactions; returns a function that stops it. */
export function confirmEachTransaction(
  url: string,
  client: PublicClient,
  confirmations: number,
  everyMs = 250,
): () => void {
  const test = createTestClient({ mode: 'anvil', transport: http(url, { retryCount: 0 }) });
  let seen: bigint | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const head = await client.getBlockNumber();
    if (seen === undefined) seen = head; // what start-up mined is not ours to confirm
    let confirmedAt = head;
    for (let n = seen + 1n; n <= head; n++) {
      const block = await client.getBlock({ blockNumber: n });
      // EVM_CONFIRMATIONS counts the transaction's own block.
      if (block.transactions.length > 0) confirmedAt = n + BigInt(confirmations - 1);
    }
    if (confirmedAt > head) await test.mine({ blocks: Number(confirmedAt - head) });
    seen = confirmedAt;
  };
  const loop = () => {
    if (stopped) return;
    tick()
      .catch((err: unknown) => console.error(`confirming blocks: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, everyMs);
      });
  };
  loop();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
