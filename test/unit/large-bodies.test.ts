// Which requests take the process's body slots, and how many (jsonBody with api/overload/large-bodies.ts, decision
// 0362): a customer's body over 64 KiB one per KiB, a chunked one its route's limit; small bodies, bodies declared over
// the limit (answered 413 unread), reads and requests without a customer none. Slots are held until the request is
// answered, thrown errors included.
import { Readable } from 'node:stream';
import { expect } from 'chai';
import type Koa from 'koa';
import { jsonBody } from '../../api/middleware/json-body';
import { largeBodyTurns } from '../../api/overload/large-bodies';
import { StreamSlots } from '../../api/overload/stream-slots';
import type { CambioError } from '../../domain/errors';

const KiB = 1024;
const LIMIT = 1024 * KiB;

interface Request {
  method?: string;
  customerId?: string;
  length?: number;
  chunked?: boolean;
}

/** A request whose body is JSON of `length` bytes (64 KiB when chunked), as jsonBody reads it. */
const contextOf = (request: Request) => {
  const bytes = request.length ?? 64 * KiB;
  const json = `{"padding":"${'a'.repeat(Math.max(0, bytes - 14))}"}`;
  return {
    method: request.method ?? 'POST',
    state: { customerId: 'customerId' in request ? request.customerId : 'a' },
    request: { length: request.length },
    req: Readable.from([Buffer.from(json)]),
    get: (name: string) => (name === 'Transfer-Encoding' && request.chunked ? 'chunked' : ''),
    is: () => 'application/json',
    set: () => undefined,
  } as unknown as Koa.Context;
};

const bodySlots = (slots: StreamSlots) => jsonBody(() => LIMIT, undefined, largeBodyTurns(slots));

/** The slots `request` holds while its handler runs. */
async function slotsHeldBy(request: Request): Promise<number> {
  const slots = new StreamSlots({ max: 4096, perCustomer: 2048, waitMs: 50 });
  let held = -1;
  await bodySlots(slots)(contextOf(request), async () => {
    held = slots.active;
  }).catch(() => undefined); // a body over the limit is 413: its handler never runs
  return Math.max(held, slots.active);
}

describe("large request bodies take the process's body slots", () => {
  it('a body over 64 KiB takes one slot per KiB, a chunked one its limit', async () => {
    expect(await slotsHeldBy({ length: 64 * KiB + 1 })).to.equal(65);
    expect(await slotsHeldBy({ length: 1000 * KiB, method: 'PUT' })).to.equal(1000);
    expect(await slotsHeldBy({ chunked: true, method: 'PATCH' })).to.equal(1024);
  });

  it('small bodies, bodies over the limit, reads and requests without a customer take none', async () => {
    expect(await slotsHeldBy({ length: 64 * KiB })).to.equal(0);
    expect(await slotsHeldBy({ length: LIMIT + 1 })).to.equal(0);
    expect(await slotsHeldBy({ method: 'GET', chunked: true })).to.equal(0);
    expect(await slotsHeldBy({ customerId: undefined, length: 500 * KiB })).to.equal(0);
  });

  it('gives its slots back once answered, a thrown error too; past the share it waits, then 429', async () => {
    const slots = new StreamSlots({ max: 2048, perCustomer: 1024, waitMs: 50 });
    const middleware = bodySlots(slots);
    const ctx = () => contextOf({ length: 600 * KiB });
    await middleware(ctx(), () => Promise.reject(new Error('handler failed'))).catch(() => undefined);
    expect(slots.active).to.equal(0);

    let release!: () => void;
    const holding = middleware(ctx(), () => new Promise<void>((r) => (release = r)));
    while (release === undefined) await new Promise((r) => setImmediate(r));
    expect(slots.active).to.equal(600);
    const refused = await middleware(ctx(), () => Promise.resolve()).catch((err: CambioError) => err);
    expect(refused).to.include({ code: 'RATE_LIMITED' });
    release();
    await holding;
    expect(slots.active).to.equal(0);
  });
});
