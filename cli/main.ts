import { Command } from 'commander';
import { CambioError } from '../domain/errors';
import { customerCommands } from './commands/customer';
import { accountCommands } from './commands/account';
import { instructionCommands } from './commands/instruction';
import { operationCommands } from './commands/operation';
import { webhookCommands } from './commands/webhook';
import { reportCommands } from './commands/report';
import { paymentCommands } from './commands/payment';
import { scheduleCommands } from './commands/schedule';
import { ratesCommands } from './commands/rates';
import { statementCommands } from './commands/statement';
import { booksCommands } from './commands/books';
import { auditCommands as auditLogCommands } from './commands/audit';
import { auditCommands, auditFailure, takeOperator } from './audit';

const program = new Command();
program.name('cambio').description('Cambio operator CLI: acts through the same services and workflows as the API');
customerCommands(program);
accountCommands(program);
instructionCommands(program);
operationCommands(program);
webhookCommands(program);
reportCommands(program);
paymentCommands(program);
scheduleCommands(program);
ratesCommands(program);
statementCommands(program);
booksCommands(program);
auditLogCommands(program);
auditCommands(program);

program.parseAsync(takeOperator(process.argv)).catch(async (err) => {
  await auditFailure(err).catch((e) => console.error(`audit log not written: ${e instanceof Error ? e.message : e}`));
  if (err instanceof CambioError) {
    console.error(JSON.stringify({ code: err.code, message: err.message, details: err.details }));
  } else {
    console.error(err instanceof Error ? err.message : err);
  }
  process.exit(1);
});
