// The amount a provider's own record gives a payment it received, checked before it becomes one of ours, and
// compared with ours when the payment was recorded already.
import type { InboundPayment } from '../db/entities';
import { assetDecimals, isAssetCode } from '../domain/assets';
import { Dec } from '../domain/money';
import type { ReceivedPayment } from '../rails/rail';
import { railAsset } from '../rails/registry';

const DECIMAL = /^\d+(\.\d+)?$/;

/**
 * Throws unless `p.amount` is a positive decimal with no more places than its asset has. A provider record whose
 * amount a connector could not read (a boleto listed paid with no `valorTotalRecebido`, or `"1.234,56"`) was once
 * recorded as 0.00, and its reference then named that record for good: the real amount could never follow (decision
 * 0172); one in fractions of a centavo (10.005 BRL) put them in the ledger, and the books check threw for the asset
 * (decision 0304). Thrown, it is the run's failure for that payment alone: logged, and listed again by the next run.
 */
export function requireProviderAmount(rail: string, p: ReceivedPayment): void {
  if (p.unreadable) {
    throw new Error(`${rail} shows ${p.endToEndId} received, but ${p.unreadable}: not recorded (decision 0188)`);
  }
  const asset = p.asset ?? railAsset(rail);
  const places = asset && isAssetCode(asset) ? assetDecimals(asset) : Infinity;
  if (DECIMAL.test(p.amount) && new Dec(p.amount).gt(0) && new Dec(p.amount).decimalPlaces() <= places) return;
  throw new Error(
    `${rail} shows ${p.endToEndId} received with the amount ${JSON.stringify(p.amount)}, ` +
      `which is not one of ${asset ?? 'its asset'}: ` +
      'not recorded (record it by hand from the statement, or wait for the provider to correct it)',
  );
}

/** A payment found recorded under the provider's reference, and what it says otherwise than the provider. */
export interface KnownReceipt {
  payment: InboundPayment;
  created: false;
  /** Recorded with another amount or asset than the provider's: what differs (decision 0303). */
  disagrees?: string;
}

/**
 * The record already under the provider's reference, with what it says otherwise than the provider (amount or
 * asset), unless they agree or the provider's amount cannot be read. The first record stands (a reference is one
 * payment), but one an operator typed with another amount would leave the difference at the provider and in no
 * record, unseen: it is said (decision 0303).
 */
export function knownReceipt(rail: string, recorded: InboundPayment, p: ReceivedPayment): KnownReceipt {
  const asset = p.asset ?? railAsset(rail) ?? recorded.asset;
  const readable = !p.unreadable && DECIMAL.test(p.amount);
  if (!readable || (recorded.amount.eq(p.amount) && recorded.asset === asset))
    return { payment: recorded, created: false };
  const theirs = `${new Dec(p.amount).toFixed()} ${asset}`;
  const ours = `${recorded.amount.toFixed()} ${recorded.asset}`;
  const disagrees = `${p.endToEndId} is recorded as ${ours}; ${rail} shows ${theirs}`;
  return { payment: recorded, created: false, disagrees };
}
