// The amount a provider's own record gives a payment it received, checked before it becomes one of ours.
import { Dec } from '../domain/money';
import type { ReceivedPayment } from '../rails/rail';

const DECIMAL = /^\d+(\.\d+)?$/;

/**
 * Throws unless `p.amount` is a positive decimal. A provider record whose amount a connector could not read (a
 * boleto listed paid with no `valorTotalRecebido`, or `"1.234,56"`) was once recorded as 0.00, and its reference then
 * named that record for good: the real amount could never follow (decision 0172). Thrown, it is the run's failure
 * for that payment alone: logged, and listed again by the next run.
 */
export function requireProviderAmount(rail: string, p: ReceivedPayment): void {
  if (p.unreadable) {
    throw new Error(`${rail} shows ${p.endToEndId} received, but ${p.unreadable}: not recorded (decision 0188)`);
  }
  if (DECIMAL.test(p.amount) && new Dec(p.amount).gt(0)) return;
  throw new Error(
    `${rail} shows ${p.endToEndId} received with the amount ${JSON.stringify(p.amount)}, which is not one: ` +
      'not recorded (record it by hand from the statement, or wait for the provider to correct it)',
  );
}
