import type { Deps } from './deps';
import type { KeyPair } from './signing-keys';

/** What services get besides their EntityManager: the process-wide dependencies and the signing key. */
export interface ServiceContext extends Deps {
  signingKey: KeyPair;
}
