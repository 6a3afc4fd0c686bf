import type { AssetCode } from './assets';
import { Dec, formatAmount } from './money';

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
      type Holder = { name?: string; legalName?: string; firstName?: string; lastName?: string };
      const holder = (op.intent.beneficiary as { holder?: Holder } | undefined)?.holder;
      const name = holder?.legalName ?? holder?.name ?? [holder?.firstName, holder?.lastName].filter(Boolean).join(' ');
      return `WITHDRAWAL ${target} via PIX from ${op.accountOwner}${name ? ` to ${name}` : ''}`;
    }
    case 'SWAP':
      return `SWAP ${source} to ${target} on ${op.accountOwner}`;
    case 'TRANSFER':
      return `TRANSFER ${source} from ${op.accountOwner} to ${(op.intent.targetAccount as { owner: string }).owner}`;
  }
}
