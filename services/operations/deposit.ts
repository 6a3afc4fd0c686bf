import { AccountSchema, QuoteSchema, type Account } from '../../db/entities';
import { systemEm, type Em } from '../../db/orm';
import { addUnusedChargeCancel, dropChargeGuard, guardCharge } from '../../payments/charge-cancel';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { bareTaxId } from '../../domain/tax-id';
import { fundingInstruction, Rail, railAccepts } from '../../rails/funding';
import { railEntry } from '../../rails/registry';
import { type Dec, formatAmount } from '../../domain/money';
import { RailRejectedError, RailUnavailableError } from '../../rails/errors';
import { txidFor } from '../../rails/pix/ids';
import { nextDepositAddressIndex, startScanCursor } from '../../db/repositories/crypto-deposits';
import type { ChargeCreated, ChargeRequest } from '../../rails/rail';
import type { ServiceContext } from '../context';
import { ACCOUNT_AND_QUOTE_REFUSALS, requireAssetEnabled, requireRailConfigured } from './checks';
import { createOperation } from './create';

export interface DepositBody {
  accountId: string;
  quoteId: string;
  fundingInstruction: { rail: Rail };
}

/**
 * A deposit: the quote's source is the asset paid in through the rail, its target the asset credited.
 * The window and replay window are fixed at creation and handed to the workflow. A PIX deposit of a deployment
 * with a PSP carries the charge `chargeForDeposit` created before the request's transaction.
 */
export function createDeposit(s: ServiceContext, em: Em, body: DepositBody, charge?: ChargeCreated) {
  const rail = body.fundingInstruction.rail;
  return createOperation(s, em, {
    type: 'DEPOSIT',
    accountId: body.accountId,
    quoteId: body.quoteId,
    async plan(tx, account, quote, operationId) {
      if (!railAccepts(rail, quote.sourceAsset)) {
        throw new CambioError('RAIL_ASSET_MISMATCH', `${rail} does not pay in ${quote.sourceAsset}`, {
          rail,
          asset: quote.sourceAsset,
        });
      }
      requireAssetEnabled(account, quote.targetAsset);
      requireRailConfigured(s.config, rail);
      requireRailCarries(rail, quote.sourceAmount);
      const due = new Date(Date.now() + s.config.depositWindowSeconds * 1000);
      const charged = s.rails?.connector(rail)?.charges !== undefined;
      // The checks before the charge found nothing wrong, these did (an account or asset changed in between): the
      // client's retry charges again (same txid) and meets the same checks here. Not stored with the key.
      if (charged && !charge) throw chargeUnavailable('the deposit changed while its charge was created', 1);
      // The deposit carries its charge: the guard's cancel goes with this COMMIT (rolled back with it otherwise).
      if (charge) await dropChargeGuard(tx, rail, charge.chargeId);
      return {
        intent: {
          type: 'DEPOSIT',
          fundingInstruction: charged
            ? charge!.fundingInstruction
            : fundingInstruction(rail, operationId, quote.sourceAsset, due, {
                config: s.config,
                ownerTaxId: account.owner?.taxId?.value && bareTaxId(account.owner.taxId.value),
                amount: formatAmount(quote.sourceAmount, quote.sourceAsset as AssetCode),
              }),
        },
        workflowInput: {
          depositWindowSeconds: s.config.depositWindowSeconds,
          // The window ends here whenever its workflow starts (decision 0339).
          depositWindowEndsAt: due.toISOString(),
          replayWindowSeconds: s.config.replayWindowSeconds,
          ...lateArrival(s, rail, charged),
        },
      };
    },
  });
}

// The refusals a deposit's request ends with for good, stored with its key (api/middleware/idempotency.ts): no retry
// of that request reaches its charge again.
const FINAL_REFUSALS = new Set<string>([...ACCOUNT_AND_QUOTE_REFUSALS, 'RAIL_ASSET_MISMATCH', 'RAIL_NOT_CONFIGURED']);

/**
 * `createDeposit`; when it refuses for good after a charge was created for it (two requests on one quote, say), that
 * charge is cancelled at its provider, for a rail whose charges stay payable (docs/decisions/0195). The refusal is the
 * answer whatever becomes of the cancel.
 */
export async function createDepositOrCancelCharge(
  s: ServiceContext,
  em: Em,
  body: DepositBody,
  charge?: ChargeCreated,
) {
  try {
    return await createDeposit(s, em, body, charge);
  } catch (err) {
    if (charge && err instanceof CambioError && FINAL_REFUSALS.has(err.code)) {
      const unused = { rail: body.fundingInstruction.rail, chargeId: charge.chargeId, customerId: customerOf(em) };
      await addUnusedChargeCancel(systemEm(s.orm), s.config, unused).catch((e: unknown) =>
        s.log.warn({ err: e, ...unused }, 'the cancel of a charge no deposit carries was not recorded'),
      );
    }
    throw err;
  }
}

/** The most one payment on `rail` carries, when `amount` is above it (a boleto's barcode, decision 0341). */
function railMaxBelow(rail: Rail, amount: Dec): string | undefined {
  const max = railEntry(rail)?.maxAmount;
  return max !== undefined && amount.gt(max) ? max : undefined;
}

/** 422 RAIL_REJECTED for an amount no single payment on `rail` carries: no instruction anyone could pay. */
function requireRailCarries(rail: Rail, amount: Dec): void {
  const max = railMaxBelow(rail, amount);
  if (max === undefined) return;
  throw new CambioError('RAIL_REJECTED', `a ${rail} payment carries at most ${max}: pay this deposit by another rail`, {
    rail,
    maxAmount: max,
  });
}

/**
 * How long a deposit waits after its window for a payment made within it that Cambio learns of late (decisions 0191,
 * 0321, 0322): the rail's bound, at most a quarter of the window, so that a short window (a test's, a deployment's
 * of an hour) stays short.
 */
function lateArrival(s: ServiceContext, rail: Rail, charged: boolean): { lateArrivalSeconds?: number } {
  const late = railEntry(rail)?.lateArrivalSeconds?.(s.config, { charged });
  const seconds = Math.min(late ?? 0, Math.floor(s.config.depositWindowSeconds / 4));
  return seconds > 0 ? { lateArrivalSeconds: seconds } : {};
}

/**
 * The PIX charge of a deposit about to be created (decision 0078): the one
 * provider call the API makes itself, before the request's transaction (no transaction waits on the PSP), bounded
 * by PIX_CHARGE_TIMEOUT_MS. Its txid derives from the customer and the idempotency key, so the retry of a request
 * that died before its COMMIT finds the same charge at the PSP (read back by the connector) and the deposit it
 * finally creates carries it. Undefined when no charge is wanted: another rail, no PSP, or a request the
 * transaction will refuse anyway (quote used, expired or not this account's, account not active, asset not
 * enabled: no charge is left behind for those). A PSP that is down or slow is 503 with its Retry-After, before
 * anything is written.
 */
export async function chargeForDeposit(
  s: ServiceContext,
  em: Em,
  body: DepositBody,
  idempotencyKey: string,
  customerId: string,
): Promise<ChargeCreated | undefined> {
  const rail = body.fundingInstruction.rail;
  const charges = s.rails?.connector(rail)?.charges;
  if (!charges) return undefined;
  const read = em.fork();
  const [account, quote] = await Promise.all([
    read.findOne(AccountSchema, { id: body.accountId }),
    read.findOne(QuoteSchema, { id: body.quoteId }),
  ]);
  if (!account || !quote || account.status !== 'ACTIVE' || quote.accountId !== account.id) return undefined;
  if (quote.consumedBy || quote.expiresAt.getTime() <= Date.now() || !railAccepts(rail, quote.sourceAsset))
    return undefined;
  if (!account.assets.some((a) => a.asset === quote.targetAsset && a.status === 'ACTIVE')) return undefined;
  if (railMaxBelow(rail, quote.sourceAmount) !== undefined) return undefined;
  const request: ChargeRequest = {
    chargeId: txidFor(customerId, idempotencyKey, quote.id),
    amount: formatAmount(quote.sourceAmount, quote.sourceAsset as AssetCode),
    expiresInSeconds: s.config.depositWindowSeconds,
    asset: quote.sourceAsset,
    // CRYPTO: the index of the deposit's own address (decision 0131).
    ...(charges.numbered ? { sequence: await nextDepositAddressIndex(read) } : {}),
    ...(debtorOf(account) ? { debtor: debtorOf(account) } : {}),
  };
  // A charge that stays payable is guarded first: its cancel, due once no request can carry it any more. A request that
  // dies, or answers 503 and is never retried, after the provider registered it leaves it to be cancelled (0243).
  const guarded = { rail, chargeId: charges.chargeIdFor?.(request.chargeId) ?? request.chargeId, customerId };
  await guardCharge(systemEm(s.orm), s.config, guarded, quote.expiresAt);
  // The rail's bound of a provider call the client waits for (its notices' read-back bound: PIX_CHARGE_TIMEOUT_MS).
  const timeoutMs = railEntry(rail)?.notices?.timeoutMs(s.config) ?? s.config.pix.chargeTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const late = () => reject(new RailUnavailableError(`no charge from the PSP within ${timeoutMs} ms`));
    timer = setTimeout(late, timeoutMs);
  });
  const creating = charges.createCharge(request, timeoutMs);
  creating.catch(() => undefined); // its own timeout ends it after the deadline answered
  try {
    const created = await Promise.race([creating, deadline]);
    // A chain's address (CRYPTO): a chain no scan has read yet is first read from this charge's block, not from
    // one range below the head the first scan meets, which may be long after the payment (decision 0292).
    if (created.scanFrom) await startScanCursor(systemEm(s.orm), created.scanFrom.chainId, created.scanFrom.block);
    return created;
  } catch (err) {
    if (err instanceof RailUnavailableError) {
      s.log.warn(
        { err: err.message, txid: request.chargeId },
        `${rail} charge not created: the provider is unavailable`,
      );
      throw chargeUnavailable('the PSP did not create the charge', err.retryAfterSeconds);
    }
    if (err instanceof RailRejectedError && err.status === 409) {
      // The txid (customer, key, quote) holds a different charge at the PSP: not one this request made.
      throw new CambioError('IDEMPOTENCY_KEY_REUSED', 'this X-Idempotency-Key was used for a different request');
    }
    if (err instanceof RailRejectedError) {
      // The PSP refused the charge itself (say, the account owner's tax id): no operation, nothing held. The
      // operator's log has the PSP's words; the customer is told only which of its data was refused, when the
      // connector can tell (decision 0262), never the PSP's text, paths or the values it echoes.
      s.log.warn({ err: err.message, txid: request.chargeId }, `${rail} charge refused by the provider`);
      const told = err.forCustomer ? `: ${err.forCustomer}` : '';
      throw new CambioError('RAIL_REJECTED', `the PSP refused the deposit's charge${told}`, { rail });
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Both steps outside a request (tests, tools): the charge, then the deposit in its own transaction. */
export async function openDeposit(s: ServiceContext, em: Em, body: DepositBody, idempotencyKey: string) {
  const charge = await chargeForDeposit(s, em, body, idempotencyKey, customerOf(em));
  return createDepositOrCancelCharge(s, em, body, charge);
}

const customerOf = (em: Em): string => em.getFilterParams<{ customerId: string }>('tenant').customerId;

const chargeUnavailable = (message: string, retryAfterSeconds: number) =>
  new CambioError('SERVICE_UNAVAILABLE', `${message}; retry with the same X-Idempotency-Key`, { retryAfterSeconds });

/**
 * API Pix's `devedor`: a CPF (11 digits) or a CNPJ (14) with the owner's name; left out when neither fits. The
 * owner's address goes with it (a boleto's `pagador` carries one).
 */
function debtorOf(account: Account): ChargeRequest['debtor'] {
  const taxId = account.owner?.taxId;
  const digits = taxId?.value ? bareTaxId(taxId.value) : '';
  const name = account.legalName.slice(0, 200);
  const address = account.owner?.address ? { address: account.owner.address } : {};
  if (taxId?.type === 'CNPJ' && /^[0-9A-Z]{14}$/.test(digits)) return { name, cnpj: digits, ...address };
  if (taxId?.type === 'CPF' && /^\d{11}$/.test(digits)) return { name, cpf: digits, ...address };
  return undefined;
}
