import { Command } from 'commander';
import { CambioError } from '../domain/errors';
import { customerCommands } from './commands/customer';
import { accountCommands } from './commands/account';
import { instructionCommands } from './commands/instruction';
import { operationCommands } from './commands/operation';
import { webhookCommands } from './commands/webhook';
import { reportCommands } from './commands/report';
import { paymentCommands } from './commands/payment';

const program = new Command();
program.name('cambio').description('Cambio operator CLI: acts through the same services and workflows as the API');
customerCommands(program);
accountCommands(program);
instructionCommands(program);
operationCommands(program);
webhookCommands(program);
reportCommands(program);
paymentCommands(program);

program.parseAsync(process.argv).catch((err) => {
  if (err instanceof CambioError) {
    console.error(JSON.stringify({ code: err.code, message: err.message, details: err.details }));
  } else {
    console.error(err instanceof Error ? err.message : err);
  }
  process.exit(1);
});
