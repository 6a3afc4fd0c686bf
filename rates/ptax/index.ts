// The PTAX connector (the BRL reference): the latest bulletin of the latest business day. A weekend or a holiday
// answers an empty list, so the poll walks back one calendar day at a time, at most MAX_DAYS_BACK.
import type { RatesConfig } from '../../config';
import type { FetchedRates, RateConnector } from '../source';
import { SourceAnswerError } from '../source';
import { fetchDay } from './client';
import { translateDay } from './translation';

// Carnival (Monday and Tuesday after a weekend) is the longest run of days without a bulletin; a week covers it
// with room, and bounds the requests of one poll.
const MAX_DAYS_BACK = 7;

/** The calendar day in Brasília at `now`, as YYYY-MM-DD: the bulletins are dated there. */
export function brasiliaDay(now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(now);
}

const dayBefore = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

export function ptaxConnector(config: RatesConfig): RateConnector {
  return {
    name: 'ptax',
    covers: ['BRL'],
    // Business days only: Carnival leaves Friday's closing bulletin the latest until Wednesday afternoon, 5 days.
    maxSourceAgeSeconds: 6 * 86_400,
    async fetchLatest(now, signal): Promise<FetchedRates> {
      let day = brasiliaDay(now);
      for (let i = 0; i <= MAX_DAYS_BACK; i++) {
        const answer = translateDay(await fetchDay(config.ptax.url, 'USD', day, signal), 'USD');
        if (answer) return answer;
        day = dayBefore(day);
      }
      throw new SourceAnswerError('ptax', `no bulletin in the last ${MAX_DAYS_BACK} days`);
    },
  };
}
