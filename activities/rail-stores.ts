// What the rails' connectors keep in Postgres, bound to this process's database (rails/ never imports db/): the
// CRYPTO hot wallet's outgoing transfers (docs/decisions/0135). Each call is its own short transaction, with no
// chain call inside it.
import type { Orm } from '../db/orm';
import { systemEm } from '../db/orm';
import {
  findOutgoingTx,
  markOutgoingFinal,
  openOutgoing,
  reserveOutgoingNonce,
  storeSignedTx,
} from '../db/repositories/crypto-outgoing';
import type { RailStores } from '../rails/rail';

export function railStores(orm: Orm): RailStores {
  const em = () => systemEm(orm);
  return {
    cryptoOutgoing: {
      find: (id) => findOutgoingTx(em(), id),
      reserve: (tx, chainNonce) => reserveOutgoingNonce(em(), tx, chainNonce),
      storeSigned: (id, raw, hash) => storeSignedTx(em(), id, raw, hash),
      markFinal: (id) => markOutgoingFinal(em(), id),
      open: (chainId, wallet, token) => openOutgoing(em(), chainId, wallet, token),
    },
  };
}
