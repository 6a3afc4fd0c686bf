// A deposit's funding instruction: what the customer pays, per rail. The rails and what each pays in are
// rails/registry.ts's; each rail's folder says how its instruction looks.
import type { DepositContext } from './rail';
import { RAILS, railAccepts, railEntry } from './registry';

export { RAILS, railAccepts };
/** A rail's name as operations carry it (one of RAILS; the API's schema holds requests to them). */
export type Rail = string;

/** Concrete funding instructions for a deposit (sandbox: deterministic, shaped like the real thing). */
export function fundingInstruction(
  rail: Rail,
  operationId: string,
  asset: string,
  dueDate: Date,
  deposit?: DepositContext,
): Record<string, string> {
  const entry = railEntry(rail);
  if (!entry) throw new Error(`no rail ${rail} in rails/registry.ts`);
  return entry.fundingInstruction(operationId, asset, dueDate, deposit);
}
