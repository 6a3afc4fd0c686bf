import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus registry, and the counters the use cases and the admission gates tick. Here rather than
 * in api/observability/metrics.ts (which serves the registry at `/metrics` and adds the HTTP and database figures)
 * because the use cases run in the CLI and the activities too, which import nothing of api/; there they count into a
 * registry nobody reads.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export type RejectionKind =
  'rate' | 'in_flight' | 'backlog' | 'token_client' | 'token_address' | 'token_concurrency' | 'rail_notice';

const rejections = new Counter({
  name: 'cambio_rate_limited_total',
  help: 'Requests answered 429 RATE_LIMITED, by the limit that refused them',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const ratesDeviation = new Gauge({
  name: 'cambio_rates_deviation_breaker_open',
  help: 'Per currency, 1 while the primary rate is beyond RATES_MAX_DEVIATION_PCT of its reference (quotes refused)',
  labelNames: ['currency', 'reference'] as const,
  registers: [registry],
});

const ratesDeviationsOpened = new Counter({
  name: 'cambio_rates_deviation_breaker_opened_total',
  help: 'Times a currency was cut off from new quotes for deviating from its reference fixing',
  labelNames: ['currency', 'reference'] as const,
  registers: [registry],
});

const ratesRefusedQuotes = new Counter({
  name: 'cambio_rates_refused_quotes_total',
  help: 'New quotes answered 503 RATES_UNAVAILABLE (no fresh primary rate, a deviation, no source), by leg',
  labelNames: ['asset'] as const,
  registers: [registry],
});

export const countRejection = (kind: RejectionKind): void => rejections.inc({ kind });
export const countRatesRefusedQuote = (asset: string): void => ratesRefusedQuotes.inc({ asset });
export function noteRatesDeviation(currency: string, open: boolean, detail: { reference: string }): void {
  ratesDeviation.set({ currency, reference: detail.reference }, open ? 1 : 0);
  if (open) ratesDeviationsOpened.inc({ currency, reference: detail.reference });
}
