import { CambioError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { auditNote } from './audit';

/**
 * The id an operator typed for the command's target, as the API reads a path id (decision 0066): a UUID, in lower
 * case, before it names anything. Postgres finds the row in either case, but workflow ids and decision locks are
 * text: `withdrawal approve <ID in upper case>` recorded its decision for a workflow that does not exist, and the
 * withdrawal stayed ON_HOLD. The audit row names the target the same way.
 */
export function targetId(value: string, what: string): string {
  if (!isUuid(value)) throw new CambioError('VALIDATION_ERROR', `${what} id must be a UUID, got "${value}"`);
  const id = value.toLowerCase();
  auditNote({ target: id });
  return id;
}

/** An id given in an option (`--account`, `--customer`, `--operation`): checked and lower-cased as `targetId`. */
export function optionId(value: string, option: string): string {
  if (!isUuid(value)) {
    const errors = [{ path: option, message: 'must be a UUID' }];
    throw new CambioError('VALIDATION_ERROR', `${option} must be a UUID, got "${value}"`, { errors });
  }
  return value.toLowerCase();
}
