// How a provider call fails, in two kinds the engine treats differently: the provider could not be reached or
// answered 5xx (try again later, the call is idempotent by our id), or it refused the request (a retry would be
// refused too).

// Client errors that ask to come back later (timeout, too early, too many requests): "not now", not "no".
const COME_BACK_LATER = new Set([408, 425, 429]);

/**
 * Whether a provider's HTTP status says "not now" (5xx, 408, 425, 429) rather than "no": retried like an outage,
 * never taken as a refusal (a payout or return marked FAILED on one may still be carried out by the provider).
 */
export const isTransientStatus = (status: number): boolean => status >= 500 || COME_BACK_LATER.has(status);

/** The first line of a thrown error's message, for our own messages: a client's (viem's) runs to many lines. */
export const firstLine = (err: unknown): string => (err as Error).message.split('\n')[0];

/** Down, slow, answering 5xx or asking to come back later (408, 425, 429): retry. The API answers 503 with
 * Retry-After; an activity retries. */
export class RailUnavailableError extends Error {
  override readonly name = 'RailUnavailableError';
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message);
  }
}

/** The provider refused the request (4xx other than 401, 408, 425, 429): the same request would be refused again. */
export class RailRejectedError extends Error {
  override readonly name = 'RailRejectedError';
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
    /**
     * Refused by the connector's own checks of the request, before anything was asked of the provider: final
     * whatever an earlier attempt did. A provider's refusal may answer a repeat of a call it took (decision 0159).
     */
    readonly beforeAnyCall = false,
    /**
     * What the customer may be told of the refusal (which of its own data the provider refused), when the connector
     * can tell; the message is the operator's, in the provider's words (decision 0262).
     */
    readonly forCustomer?: string,
  ) {
    super(message);
  }
}

/** One reason a notice is malformed: a JSON pointer into the notice (`/pix/0/valor`) and what is wrong there. */
export interface NoticeProblem {
  path: string;
  message: string;
}

/** A notice that is not the provider's (wrong token) or not in its format: answer 401 or 400, record nothing. */
export class NoticeRejectedError extends Error {
  override readonly name = 'NoticeRejectedError';
  constructor(
    message: string,
    readonly status: 400 | 401,
    readonly problems: NoticeProblem[] = [],
  ) {
    super(message);
  }
}
