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
import { dependencyFailure } from '../services/errors';

/** The dependency failure in the CLI's words: no idempotency key here, the operator runs the command again. */
function unavailable(err: unknown): CambioError | undefined {
  const failure = dependencyFailure(err);
  if (!failure) return undefined;
  const cause = err instanceof Error ? err.message : String(err);
  const message = `a service the command needs (Postgres or Temporal) is unavailable (${cause}); run it again later`;
  return new CambioError('SERVICE_UNAVAILABLE', message, failure.details);
}

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

program.parseAsync(takeOperator(process.argv)).catch(async (thrown) => {
  // Postgres or Temporal down is the API's 503 (services/errors.ts), one JSON line a script can read, not a stack.
  const err = thrown instanceof CambioError ? thrown : (unavailable(thrown) ?? thrown);
  await auditFailure(err).catch((e) => console.error(`audit log not written: ${e instanceof Error ? e.message : e}`));
  if (err instanceof CambioError) {
    console.error(JSON.stringify({ code: err.code, message: err.message, details: err.details }));
  } else {
    console.error(err instanceof Error ? err.message : err);
  }
  process.exit(1);
});
