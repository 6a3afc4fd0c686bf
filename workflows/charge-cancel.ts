// A deposit's charge cancelled at its provider once the deposit's window closed unpaid (docs/decisions/0126): a
// workflow of its own per charge, started through the outbox by the transaction that expired the deposit, so the
// deposit workflow is unchanged and a crash between that COMMIT and the provider's answer loses nothing (the relay
// starts it, the activity retries until the provider answers, and the cancel is idempotent at the provider). The
// same workflow cancels a charge whose deposit was never created (docs/decisions/0195): `unlessCarried`, it leaves
// alone a charge a deposit carries after all.
import { railActivities } from './rail-calls';

export async function chargeCancelWorkflow(
  railsTaskQueue: string,
  rail: string,
  chargeId: string,
  opts: { unlessCarried?: boolean } = {},
): Promise<string> {
  return railActivities(railsTaskQueue).railCancelCharge({
    rail,
    chargeId,
    reason: opts.unlessCarried ? 'cobranca sem deposito' : 'janela do deposito encerrada',
    ...(opts.unlessCarried ? { unlessCarried: true } : {}),
  });
}
