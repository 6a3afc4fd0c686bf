// Exchange rates as the sources published them (table `exchange_rates`, rates/README.md). Plain SQL through the
// caller's EntityManager; no tenant: rates are the whole deployment's. Mids stay decimal strings end to end (numeric
// in, numeric read back as text by the driver).
import type { Em } from '../orm';

export interface ExchangeRateRow {
  source: string;
  base: string;
  currency: string;
  /** Units of `currency` per 1 `base`, a positive decimal string. */
  mid: string;
  sourceTime: Date;
  /** When a poll last received this row from its source. */
  receivedAt: Date;
}

/**
 * Stores one poll's rows. A row already stored (same source, currency and instant) takes the value of the answer
 * received last, with its `received_at`: a source that corrects a rate without a new instant (OXR's hourly plans keep
 * the hour's timestamp) is quoted at its correction, never at the value it replaced (decision 0197). A poll that
 * finishes after a later one changes nothing.
 */
export async function addExchangeRates(em: Em, rows: ExchangeRateRow[]): Promise<void> {
  if (rows.length === 0) return;
  await em.execute(
    `insert into exchange_rates (source, currency, source_time, base, mid, received_at)
     select r.source, r.currency, r.source_time, r.base, r.mid, r.received_at
     from jsonb_to_recordset(?::jsonb) as r(source text, currency text, source_time timestamptz, base text,
       mid numeric, received_at timestamptz)
     on conflict (source, currency, source_time) do update set base = excluded.base, mid = excluded.mid,
       received_at = excluded.received_at
     where excluded.received_at >= exchange_rates.received_at`,
    [
      JSON.stringify(
        rows.map((r) => ({
          source: r.source,
          currency: r.currency,
          source_time: r.sourceTime.toISOString(),
          base: r.base,
          mid: r.mid,
          received_at: r.receivedAt.toISOString(),
        })),
      ),
    ],
  );
}

/**
 * The latest row (by the source's instant) of each of `sources` for each of `currencies`. One index lookup per pair
 * through the primary key (a lateral `limit 1`), so the read stays as cheap as the table's history grows.
 */
export async function latestExchangeRates(
  em: Em,
  sources: readonly string[],
  currencies: readonly string[],
): Promise<ExchangeRateRow[]> {
  if (sources.length === 0) return [];
  const rows = await em.execute(
    `select l.source, l.base, l.currency, l.mid::text as mid, l.source_time, l.received_at
     from jsonb_array_elements_text(?::jsonb) s(source)
     cross join jsonb_array_elements_text(?::jsonb) c(currency)
     cross join lateral (
       select e.source, e.base, e.currency, e.mid, e.source_time, e.received_at from exchange_rates e
       where e.source = s.source and e.currency = c.currency
       order by e.source_time desc limit 1
     ) l`,
    [JSON.stringify(sources), JSON.stringify(currencies)],
  );
  return rows.map((r) => ({
    source: r.source as string,
    base: r.base as string,
    currency: r.currency as string,
    mid: r.mid as string,
    sourceTime: new Date(r.source_time as string),
    receivedAt: new Date(r.received_at as string),
  }));
}

/**
 * The database's clock: the one clock a rate's `received_at` is written by (rates/poll.ts) and its age is judged by
 * (rates/book.ts, `cambio rates`), so a worker's or an API host's clock off by minutes neither refuses every fresh
 * rate nor prices from stale ones (decision 0298).
 */
export async function ratesClock(em: Em): Promise<Date> {
  const [row] = await em.execute('select clock_timestamp() as now');
  return new Date(row.now as string);
}
