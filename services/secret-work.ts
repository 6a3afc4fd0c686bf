import { CambioError } from '../domain/errors';
import { countRejection } from './metrics';
import { Semaphore } from './semaphore';

// Each secret check is one scrypt (16 MiB, tens of ms on libuv's 4-thread pool, which DNS and file I/O share).
// Two at a time leave the pool room for everything else; a flood past 32 waiting is refused rather than queued.
const SCRYPT_CONCURRENCY = 2;
const SCRYPT_QUEUE = 32;

const scryptWork = new Semaphore(SCRYPT_CONCURRENCY, SCRYPT_QUEUE);

/**
 * Runs a secret hash or check under the process-wide bound on concurrent scrypt work; 429 RATE_LIMITED when
 * too many are already waiting (the token endpoint's only expensive step, so a flood cannot starve the rest).
 */
export function boundedSecretWork<T>(work: () => Promise<T>): Promise<T> {
  return scryptWork.run(work, busy);
}

function busy(): CambioError {
  countRejection('token_concurrency');
  return new CambioError('RATE_LIMITED', 'the token endpoint is busy; retry shortly', { retryAfterSeconds: 1 });
}
