import { isBusinessDay } from '@brazilian-utils/brazilian-utils';

// A boleto's due date (docs/decisions/0125): the deposit window's end, as a calendar day in Brasília (UTC-3, no
// daylight saving since 2019), and at least the next business day (national holidays included): a boleto due today
// or on a Sunday cannot be paid at a branch or clear before it is late.

const BRASILIA_OFFSET_MS = -3 * 3_600_000;
const DAY_MS = 86_400_000;

const dayOf = (d: Date): string => new Date(d.getTime() + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);
const noonUtc = (day: string): Date => new Date(`${day}T12:00:00Z`);
const nextDay = (day: string): string => new Date(noonUtc(day).getTime() + DAY_MS).toISOString().slice(0, 10);

/** Easter Sunday of `year` (YYYY-MM-DD), the Gregorian computus of Meeus, Jones and Butcher. */
export function easter(year: number): string {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const dayOfMonth = ((h + l - 7 * m + 114) % 31) + 1;
  return `${year}-${String(month).padStart(2, '0')}-${String(dayOfMonth).padStart(2, '0')}`;
}

/**
 * Carnival Monday, 48 days before Easter: banks close on it as on the Tuesday (FEBRABAN's calendar), but the
 * library's holidays have the Tuesday only.
 */
function isCarnivalMonday(day: string): boolean {
  const monday = new Date(noonUtc(easter(Number(day.slice(0, 4)))).getTime() - 48 * DAY_MS);
  return monday.toISOString().slice(0, 10) === day;
}

/** Whether banks open on `day` (YYYY-MM-DD): a weekday that is no national holiday, Carnival's two days included. */
const isBankDay = (day: string): boolean => isBusinessDay(noonUtc(day)) && !isCarnivalMonday(day);

/** The first bank day after `day` (YYYY-MM-DD). */
function bankDayAfter(day: string): string {
  let next = nextDay(day);
  while (!isBankDay(next)) next = nextDay(next);
  return next;
}

/** YYYY-MM-DD: the later of the window's end and the first bank day after `now`, in Brasília. */
export function boletoDueDate(now: Date, windowEnd: Date): string {
  const nextBusiness = bankDayAfter(dayOf(now));
  const due = dayOf(windowEnd) > nextBusiness ? dayOf(windowEnd) : nextBusiness;
  return isBankDay(due) ? due : bankDayAfter(due);
}
