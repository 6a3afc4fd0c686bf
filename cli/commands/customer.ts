import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { createCustomer, rotateClientSecret, type RotatedSecret } from '../../services/auth';
import { auditNote } from '../audit';
import type { ServiceContext } from '../../services/context';
import { setCustomerDisabled } from '../../services/customers';
import { output, withServices } from '../context';
import { targetId } from '../ids';

export function customerCommands(program: Command): void {
  const customer = program.command('customer').description('customers and their API credentials');
  customer
    .command('create')
    .description('create a customer with client credentials (the secret is shown once)')
    .requiredOption('--name <name>', 'customer name')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; json?: boolean }) => {
      // Named before it is created: the audit row commits with the customer, so it must know its target by then.
      const customerId = randomUUID();
      auditNote({ target: customerId });
      const created = await withServices((s) => createCustomer(s.orm, opts.name, customerId));
      output(
        !!opts.json,
        created,
        `customer ${created.customerId}\nclientId ${created.clientId}\nclientSecret ${created.clientSecret} ` +
          `(shown once)`,
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
