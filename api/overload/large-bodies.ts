import type Koa from 'koa';
import type { StreamSlots } from './stream-slots';

/** A body of at most this many bytes is read at once, without a slot: a quote's or a transfer's is a few hundred. */
export const SMALL_BODY_BYTES = 64 * 1024;

/** The turn of a body of `bytes` about to be read: resolves with the release of its slots; undefined if none. */
export type BodyTurn = (ctx: Koa.Context, bytes: number) => Promise<() => void> | undefined;

/**
 * A customer's large body (over SMALL_BODY_BYTES) takes one of the process's body slots per KiB before a byte of it
 * is read, and jsonBody gives them back once its request is answered (decision 0362). Reading, decoding and parsing a
 * megabyte costs the API's one thread about 9 ms, and the buffers of many at once its heap: eight of one customer's
 * at once made every other customer's request take 30 to 140 times its pace. The slots let a process read
 * BODY_KIB_MAX of them at once, BODY_KIB_PER_CUSTOMER of one customer's; past that the request waits its turn, then
 * is 429 (its customer's share) or 503 (the process's) with Retry-After. The slots are taken before the read because
 * the read is most of the cost: taken after it, they changed nothing measurable.
 *
 * Requests without a customer (the token endpoint's few bytes, a PSP's notice behind its own gate) take none.
 */
export function largeBodyTurns(slots: StreamSlots): BodyTurn {
  return (ctx, bytes) => {
    const customerId: string | undefined = ctx.state.customerId;
    if (customerId === undefined || bytes <= SMALL_BODY_BYTES) return undefined;
    return slots.take(customerId, Math.ceil(bytes / 1024));
  };
}
