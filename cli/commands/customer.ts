import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { rotateClientSecret, type RotatedSecret } from '../../services/auth';
import { onboardCustomer } from '../../services/customer-onboarding';
import { auditNote } from '../audit';
import type { ServiceContext } from '../../services/context';
import { setCustomerDisabled } from '../../services/customers';
import { output, withServices } from '../context';
import { targetId } from '../ids';

export function customerCommands(program: Command): void {
  const customer = program.command('customer').description('customers and their API credentials');
  customer
    .command('create')
    .description(
      'create a customer with client credentials (the secret is shown once); run again after a failure, it is the ' +
        'same customer with a new secret, until that customer is used: then a name in use is refused',
    )
    .requiredOption('--name <name>', 'customer name, one customer per name (trimmed, in any case)')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; json?: boolean }) => {
      // Named before it is created: the audit row commits with the customer, so it must know its target by then.
      const customerId = randomUUID();
      auditNote({ target: customerId });
      // The customer an earlier run created is the target too, whether it is resumed or refused (decision 0267).
      const named = (id: string, resumed: boolean) => auditNote({ target: id, details: resumed ? { resumed } : {} });
      const { resumed, ...created } = await withServices((s) => onboardCustomer(s.orm, opts.name, customerId, named));
      // The earlier run's secret no longer works: said where the operator reads it, outside the JSON of the spec.
      const earlier = `customer ${created.customerId} was created by an earlier run; its secret no longer works`;
      if (resumed && opts.json) console.error(earlier);
      output(
        !!opts.json,
        created,
        `${resumed ? `${earlier}\n` : ''}customer ${created.customerId}\nclientId ${created.clientId}\n` +
          `clientSecret ${created.clientSecret} (shown once)`,
      );
    });
  customer
    .command('disable <customerId>')
    .description("stop a customer's access: no new tokens, existing ones rejected within CUSTOMER_CACHE_SECONDS")
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const customerId = targetId(typed, 'customer');
      const status = await withServices((s) => setCustomerDisabled(s.orm, customerId, true));
      output(!!opts.json, status, `customer ${status.customerId} is disabled (since ${status.disabledAt})`);
    });
  customer
    .command('enable <customerId>')
    .description('give a disabled customer its access back: new tokens; those issued before the disable stay refused')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const customerId = targetId(typed, 'customer');
      const status = await withServices((s) => setCustomerDisabled(s.orm, customerId, false));
      output(!!opts.json, status, `customer ${status.customerId} is enabled`);
    });
  customer
    .command('rotate-secret <customerId>')
    .description('a new client secret (shown once); the old one keeps working for CLIENT_SECRET_GRACE_SECONDS')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const customerId = targetId(typed, 'customer');
      // Noted inside the rotation's transaction: the audit row commits with it, never without these details.
      const note = (r: RotatedSecret) =>
        auditNote({ details: { clientId: r.clientId, previousSecretExpiresAt: r.previousSecretExpiresAt } });
      const rotate = (s: ServiceContext) =>
        rotateClientSecret(s.orm, customerId, s.config.clientSecretGraceSeconds, note);
      const rotated = await withServices(rotate);
      const human = [
        `clientId ${rotated.clientId}`,
        `clientSecret ${rotated.clientSecret} (shown once)`,
        `the previous secret works until ${rotated.previousSecretExpiresAt}`,
      ];
      output(!!opts.json, rotated, human.join('\n'));
    });
}
