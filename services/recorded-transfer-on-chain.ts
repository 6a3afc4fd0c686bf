// A CRYPTO transfer an operator records (`cambio payment record --rail CRYPTO`) is read on the chain first when the
// rail has a node (decision 0293): a transfer to a deposit's address is that deposit's customer's money, which the
// scanner records for them, and no other customer's to be credited with; and it is recorded as the chain shows it,
// its token and amount, not as typed (decision 0335).
import Decimal from 'decimal.js';
import { systemEm } from '../db/orm';
import { depositsByWallet } from '../db/repositories/crypto-deposits';
import { CambioError } from '../domain/errors';
import { CryptoRail } from '../rails/crypto';
import { RailUnavailableError } from '../rails/errors';
import type { ServiceContext } from './context';

/**
 * Refuses (409 RAIL_REFERENCE_IN_USE) to record `endToEndId` for `customerId` when the chain shows it paid a deposit
 * address of another customer, (400 VALIDATION_ERROR) with an asset or amount the chain does not show, and (409
 * INVALID_STATE) while it is fewer than EVM_CONFIRMATIONS blocks deep: until then it is in no balance (the scanner's
 * PENDING), and a reorganisation may still take it away (decision 0328); 503 while the node does not answer (nothing
 * recorded). A reference the chain does not show as a listed token's transfer, or a deployment without a node, is
 * recorded as typed.
 */
export async function requireTransferOnChain(
  s: ServiceContext,
  rail: string,
  endToEndId: string,
  customerId: string,
  typed: { asset: string; amount: string },
): Promise<void> {
  const connector = s.rails?.connector(rail);
  if (!(connector instanceof CryptoRail)) return;
  let seen: Awaited<ReturnType<CryptoRail['transferOnChain']>>;
  try {
    seen = await connector.transferOnChain(endToEndId);
  } catch (err) {
    if (!(err instanceof RailUnavailableError)) throw err;
    throw new CambioError('SERVICE_UNAVAILABLE', `${err.message}: nothing was recorded`, {
      retryAfterSeconds: err.retryAfterSeconds,
    });
  }
  if (!seen) return;
  const to = seen.to.toLowerCase();
  const deposit = (await depositsByWallet(systemEm(s.orm), rail, [to])).get(to);
  if (deposit && deposit.customerId !== customerId) {
    const message = `${rail} transfer ${endToEndId} paid another customer's deposit address: it is theirs`;
    throw new CambioError('RAIL_REFERENCE_IN_USE', message, { rail, endToEndId });
  }
  // What the operator typed is what gets credited or returned: 30.00 typed for a 3 USDT transfer is not 30 USDT.
  const asShown = seen.amount === undefined ? undefined : new Decimal(seen.amount);
  if (seen.asset !== typed.asset || !asShown?.equals(typed.amount)) {
    const shown =
      seen.amount === undefined ? `${seen.asset} with dust below 6 decimal places` : `${seen.amount} ${seen.asset}`;
    const message =
      `${rail} transfer ${endToEndId} is ${shown} on the chain, not ${typed.amount} ${typed.asset}: ` +
      'nothing was recorded';
    const errors =
      seen.asset !== typed.asset
        ? [{ path: '--asset', message: `is ${seen.asset} on the chain` }]
        : [{ path: '--amount', message: `is ${seen.amount ?? 'not a whole number of micro-units'} on the chain` }];
    throw new CambioError('VALIDATION_ERROR', message, {
      errors,
      onChain: { asset: seen.asset, amount: seen.amount ?? null },
    });
  }
  const required = s.config.crypto.confirmations;
  if (seen.confirmations < required) {
    const message =
      `${rail} transfer ${endToEndId} is ${seen.confirmations} of ${required} blocks deep (EVM_CONFIRMATIONS): ` +
      'it is money only once confirmed; nothing was recorded (the scanner records a transfer to a deposit address ' +
      'by itself once it is)';
    throw new CambioError('INVALID_STATE', message, {
      rail,
      endToEndId,
      confirmations: seen.confirmations,
      required,
    });
  }
}
