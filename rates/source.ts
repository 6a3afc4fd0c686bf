// The shape every rate source's connector answers in (rates/README.md): the rows it read, each with the instant the
// source gave, and the values it refused, each with why.

/** One rate as a source published it: units of `currency` per 1 unit of the answer's base. */
export interface FetchedRate {
  currency: string;
  /** A positive decimal string (rates/values.ts), never a JS number. */
  mid: string;
  sourceTime: Date;
}

export interface RefusedRate {
  currency: string;
  reason: string;
}

export interface FetchedRates {
  /** The currency the mids are quoted against: USD for OXR and PTAX, EUR for the ECB. */
  base: string;
  rates: FetchedRate[];
  refused: RefusedRate[];
}

export interface RateConnector {
  name: 'oxr' | 'ptax' | 'ecb';
  /** The currencies this source is a reference for (the deviation breaker); the primary's role ignores it. */
  covers: readonly string[];
  /**
   * How old the source's own instant may be while it prices quotes as the primary: its longest gap between two
   * publications, with room. An older one is a feed that stopped moving though it still answers (decision 0297).
   */
  maxSourceAgeSeconds: number;
  /** One read of the source's latest rates; `signal` ends it at the poll's timeout. */
  fetchLatest(now: Date, signal: AbortSignal): Promise<FetchedRates>;
}

/** A source answered something that is not its documented shape (a status, a body): nothing of it is stored. */
export class SourceAnswerError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
    this.name = 'SourceAnswerError';
  }
}

// The most of an answer a poll reads (decision 0299): OXR's latest.json is a few KB, a PTAX day and the ECB's daily
// file under 2 KB. A body of any size (a misdirected URL, a broken proxy) was read whole into the rails worker's
// memory.
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** GET `url` as text within `signal`; any status but 200, or a body over MAX_ANSWER_BYTES, is the source's error. */
export async function getText(source: string, url: string, signal: AbortSignal, accept: string): Promise<string> {
  const res = await fetch(url, { signal, headers: { accept } });
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new SourceAnswerError(source, `HTTP ${res.status} from ${new URL(url).host}`);
  }
  return textWithin(source, res, MAX_ANSWER_BYTES);
}

// The body as UTF-8 text, refused as soon as it is known to be over `limit`: by its Content-Length before a byte is
// read, else by counting as it streams in.
async function textWithin(source: string, res: Response, limit: number): Promise<string> {
  const over = () => new SourceAnswerError(source, `the answer is over ${limit} bytes`);
  if (Number(res.headers.get('content-length') ?? 0) > limit) {
    await res.body?.cancel();
    throw over();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw over();
    }
    text += decoder.decode(value, { stream: true });
  }
}
