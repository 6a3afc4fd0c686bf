import type { AssetCode } from './assets';
import { Dec, formatAmount } from './money';
import { holderName } from './payee';

/** What a summary reads of an operation (the operation entity has these fields). */
export interface SummarizedOperation {
  type: 'DEPOSIT' | 'WITHDRAWAL' | 'SWAP' | 'TRANSFER';
  intent: Record<string, unknown>;
  accountOwner: string;
  sourceAsset: string;
  sourceAmount: Dec;
  targetAsset: string;
  targetAmount: Dec;
}

// One line per workflow for the Temporal UI's list (decision 0050): kind, amount, rail or counterpart, and the
// account's owner, so an operator reads the list without opening each workflow.

const money = (value: Dec, asset: string) => `${formatAmount(value, asset as AssetCode)} ${asset}`;

export function operationSummary(op: SummarizedOperation): string {
  const source = money(op.sourceAmount, op.sourceAsset);
  const target = money(op.targetAmount, op.targetAsset);
  switch (op.type) {
    case 'DEPOSIT':
      return `DEPOSIT ${source} via ${(op.intent.fundingInstruction as { rail: string }).rail} to ${op.accountOwner}`;
    case 'WITHDRAWAL': {
      type Beneficiary = { holder?: Parameters<typeof holderName>[0]; paymentInstruction?: { rail?: string } };
      const beneficiary = op.intent.beneficiary as Beneficiary | undefined;
      const name = holderName(beneficiary?.holder);
      // The instruction's own rail, as a deposit names its own: a WALLET pays on CRYPTO, never "via PIX". None
      // named (a snapshot without it), none said: this file names no rail of its own (the registry does).
      const rail = beneficiary?.paymentInstruction?.rail;
      return `WITHDRAWAL ${target}${rail ? ` via ${rail}` : ''} from ${op.accountOwner}${name ? ` to ${name}` : ''}`;
    }
    case 'SWAP':
      return `SWAP ${source} to ${target} on ${op.accountOwner}`;
    case 'TRANSFER':
      return `TRANSFER ${source} from ${op.accountOwner} to ${(op.intent.targetAccount as { owner: string }).owner}`;
  }
}

/**
 * The most a summary may take as JSON (its quotes and escapes counted), so that a start is never refused for it.
 * Temporal servers check `limit.userMetadataSummarySize` (400 bytes by default) against the serialized payload:
 * this JSON plus about 30 bytes of encoding metadata. A legal name may take 200 characters of up to 3 bytes each,
 * and a transfer's summary holds two: uncut, a relay would retry a refused start for ever (decision 0200).
 */
export const SUMMARY_MAX_JSON_BYTES = 320;

const jsonBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));

/** `summary` as it is, or cut on a code point with an ellipsis so that its JSON takes at most `maxBytes`. */
export function clampSummary(summary: string, maxBytes = SUMMARY_MAX_JSON_BYTES): string {
  if (jsonBytes(summary) <= maxBytes) return summary;
  const ellipsis = '\u2026';
  let room = maxBytes - jsonBytes(ellipsis);
  let cut = '';
  for (const codePoint of summary) {
    const cost = jsonBytes(codePoint) - 2; // its quotes are counted once, in the ellipsis's
    if (cost > room) break;
    room -= cost;
    cut += codePoint;
  }
  return cut + ellipsis;
}
