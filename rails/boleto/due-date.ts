import { addBusinessDays, isBusinessDay } from '@brazilian-utils/brazilian-utils';

// A boleto's due date (docs/decisions/0125): the deposit window's end, as a calendar day in Brasília (UTC-3, no
// daylight saving since 2019), and at least the next business day (national holidays included): a boleto due today
// or on a Sunday cannot be paid at a branch or clear before it is late.

const BRASILIA_OFFSET_MS = -3 * 3_600_000;

const dayOf = (d: Date): string => new Date(d.getTime() + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);
const noonUtc = (day: string): Date => new Date(`${day}T12:00:00Z`);

/** The business day `n` days after `day` (YYYY-MM-DD); the library answers null only for an invalid date. */
function businessDaysAfter(day: string, n: number): string {
  const next = addBusinessDays(noonUtc(day), n);
  if (!next) throw new Error(`not a date: ${day}`);
  return dayOf(next);
}

/** YYYY-MM-DD: the later of the window's end and the first business day after `now`, in Brasília. */
export function boletoDueDate(now: Date, windowEnd: Date): string {
  const nextBusiness = businessDaysAfter(dayOf(now), 1);
  let due = dayOf(windowEnd) > nextBusiness ? dayOf(windowEnd) : nextBusiness;
  while (!isBusinessDay(noonUtc(due))) due = businessDaysAfter(due, 1);
  return due;
}
