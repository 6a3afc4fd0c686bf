import type { Command } from 'commander';
import { createCustomer } from '../../api/services/auth';
import { output, withServices } from '../context';

export function customerCommands(program: Command): void {
  const customer = program.command('customer').description('customers and their API credentials');
  customer
    .command('create')
    .description('create a customer with client credentials (the secret is shown once)')
    .requiredOption('--name <name>', 'customer name')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; json?: boolean }) => {
      const created = await withServices((s) => createCustomer(s.orm, opts.name));
      output(!!opts.json, created, `customer ${created.customerId}\nclientId ${created.clientId}\nclientSecret ${created.clientSecret} (shown once)`);
    });
}
