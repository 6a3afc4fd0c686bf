// What the rails' connectors keep in Postgres, bound to this process's database (rails/ never imports db/): the
// CRYPTO hot wallet's outgoing transfers, each call its own short transaction with no chain call inside it; and the
// writer of the wallet's nonces, its workflow, reached through this process's Temporal client (decision 0142).
import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm';
import { systemEm } from '../db/orm';
import {
  findOutgoingTx,
  markOutgoingFinal,
  openOutgoing,
  refuseOutgoingUnordered,
  storeSignedTx,
} from '../db/repositories/crypto-outgoing';
import type { RailStores } from '../rails/rail';
import { type HotWalletQueues, temporalNonceWriter } from './hot-wallet-nonces';

export function railStores(orm: Orm, temporal: Client, queues: HotWalletQueues): RailStores {
  const em = () => systemEm(orm);
  return {
    cryptoNonces: temporalNonceWriter(temporal, queues),
    cryptoOutgoing: {
      find: (id) => findOutgoingTx(em(), id),
      storeSigned: (id, raw, hash) => storeSignedTx(em(), id, raw, hash),
      markFinal: (id) => markOutgoingFinal(em(), id),
      refuseUnordered: (id, reason) => refuseOutgoingUnordered(em(), id, reason),
      open: (chainId, wallet, token) => openOutgoing(em(), chainId, wallet, token),
    },
  };
}
