import { Command, CommanderError } from 'commander';
import { CambioError } from '../domain/errors';
import { addCommandGroups } from './command-groups';
import { actionCommitted, auditCommands, auditFailure, finishedByRerun, takeOperator } from './audit';
import { dependencyFailure } from '../services/errors';

/**
 * The dependency failure in the CLI's words: no idempotency key here. Before the action committed nothing was done
 * and the operator runs the command again; after it (a decision whose signal Temporal did not take, decision 0269)
 * the action stands, the worker's relay carries it out, and a rerun would be refused: `recorded` says which. An
 * action whose rest only the command makes (`rerun`: a return started and not yet completed, decision 0337) is
 * finished by running it again.
 */
function unavailable(err: unknown, recorded: boolean, rerun: boolean): CambioError | undefined {
  const failure = dependencyFailure(err);
  if (!failure) return undefined;
  const cause = err instanceof Error ? err.message : String(err);
  const message = !recorded
    ? `a service the command needs (Postgres or Temporal) is unavailable (${cause}); run it again later`
    : rerun
      ? `the action was recorded, then a service it needs (Postgres or Temporal) did not answer (${cause}): it ` +
        'stands, perhaps unfinished; run the same command again once it answers: it finishes what the command ' +
        'left (a return made outside any provider) or shows where it stands, and does nothing twice'
      : `the action was recorded, then a service it needs (Postgres or Temporal) did not answer (${cause}): it ` +
        'stands and the worker carries it out once Temporal answers; do not run it again ' +
        '(`cambio audit list` shows it)';
  return new CambioError('SERVICE_UNAVAILABLE', message, { ...failure.details, recorded, rerun: recorded && rerun });
}

/**
 * A command line commander cannot parse (an unknown option or command, a missing argument or value) in the error
 * shape every other refusal has, so a script reading stderr's last line reads this one too (decision 0269).
 */
const usageError = (err: CommanderError) =>
  new CambioError('VALIDATION_ERROR', err.message.replace(/^error: /, ''), {
    errors: [{ path: 'command line', message: err.message.replace(/^error: /, '') }],
  });

// Help and version (commander's codes with exit code 0, or 1 for help shown because no command was given).
const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

const program = new Command();
program.name('cambio').description('Cambio operator CLI: acts through the same services and workflows as the API');
// Before the commands are added, which inherit both: commander throws instead of exiting, and prints no error of its
// own (the catch below prints it in the error shape); help is still written as commander writes it.
program.exitOverride().configureOutput({ outputError: () => {} });
auditCommands(program);

// takeOperator inside the chain: a refused --operator ends as every refusal does, not as an uncaught throw.
Promise.resolve()
  .then(async () => {
    const argv = takeOperator(process.argv);
    // Only the group the command line names is loaded, with only its use cases (decision 0295).
    await addCommandGroups(program, argv);
    return program.parseAsync(argv);
  })
  .catch(async (thrown) => {
    if (thrown instanceof CommanderError && HELP_CODES.has(thrown.code)) process.exit(thrown.exitCode);
    if (thrown instanceof CommanderError) thrown = usageError(thrown);
    // Postgres or Temporal down is the API's 503 (services/errors.ts), one JSON line a script can read, not a stack.
    const err =
      thrown instanceof CambioError ? thrown : (unavailable(thrown, actionCommitted(), finishedByRerun()) ?? thrown);
    await auditFailure(err).catch((e) => console.error(`audit log not written: ${e instanceof Error ? e.message : e}`));
    if (err instanceof CambioError) {
      console.error(JSON.stringify({ code: err.code, message: err.message, details: err.details }));
    } else {
      console.error(err instanceof Error ? err.message : err);
    }
    process.exit(1);
  });
