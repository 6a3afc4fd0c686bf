import type { Store } from './store';

// What the routes and the settlement use of a running simulator (simulator.ts implements it). A file of its own, so
// that simulator.ts can mount the routes without the routes importing it back.

export interface SimulatorOptions {
  stateFile: string;
  /** Client id → secret of the clients this PSP knows. */
  clients: Record<string, string>;
  tokenTtlSeconds: number;
  /** How long a payout or return stays EM_PROCESSAMENTO before it settles. */
  settleMs: number;
  /** The environment the other providers (providers.ts) read their own settings from; none: their defaults. */
  env?: NodeJS.ProcessEnv;
}

/** A fault a control route injected: answer `status`, or hang `hangMs` before (or after) handling. */
export interface Fault {
  method?: string;
  pathPrefix?: string;
  status?: number;
  /** The answer's body with `status` (JSON, or a string sent as is, '' for none); a problem when absent. */
  body?: unknown;
  hangMs?: number;
  /**
   * Handle the request, then hang: the PSP took it but the caller hears nothing in time. With `status`, the
   * request is handled and then answered `status` and `body`: the PSP took it but says something else.
   */
  afterHandling?: boolean;
  remaining: number;
  until: number;
}

/** The simulator as its routes and its settlement see it: state, options, issued tokens and injected faults. */
export interface SimulatorHandle {
  readonly store: Store;
  readonly options: SimulatorOptions;
  readonly tokens: Map<string, number>;
  tokensIssued: number;
  faults: Fault[];
  /** The longest `inicio`-`fim` span `GET /pix` lists, as a real PSP bounds it; undefined: any span. */
  maxListWindowMs?: number;
}
