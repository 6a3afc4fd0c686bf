import { CambioError } from '../errors';
import type { ServiceContext } from '../services/context';

/** Sandbox routes exist only while SANDBOX is on; in production they answer 404 like any unknown path. */
export function requireSandbox(s: ServiceContext): void {
  if (!s.config.sandbox) throw new CambioError('SANDBOX_DISABLED', 'sandbox routes are disabled');
}
