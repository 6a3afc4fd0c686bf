// The hot wallet's signer: the one place a CRYPTO payout's private key is used (docs/decisions/0134). It signs a
// transaction Cambio built and hands back the bytes; it never sends anything. A KMS or a custodian replaces it by
// implementing TransactionSigner. The local one reads a 32-byte hex key from CRYPTO_HOT_WALLET_KEY_FILE (or, in
// sandbox only, CRYPTO_HOT_WALLET_KEY): the key is kept in this closure, never logged, never stored in Postgres,
// and no error message ever quotes it.
import { readFileSync } from 'node:fs';
import type { Hex, TransactionSerializableEIP1559 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { CryptoConfig } from './config';

export interface TransactionSigner {
  /** The address whose nonces and balances pay (EIP-55). */
  readonly address: `0x${string}`;
  /** The signed, serialised transaction (what `eth_sendRawTransaction` takes). */
  signTransaction(tx: TransactionSerializableEIP1559): Promise<Hex>;
}

const KEY = /^(0x)?[0-9a-fA-F]{64}$/;

/** A signer holding the key in this process, from `key` (32 bytes in hex, with or without 0x). */
export function localKeySigner(key: string, source: string): TransactionSigner {
  const trimmed = key.trim();
  if (!KEY.test(trimmed)) throw new Error(`${source} must hold a 32-byte hex private key (64 hex digits)`);
  const account = privateKeyToAccount((trimmed.startsWith('0x') ? trimmed : `0x${trimmed}`) as Hex);
  return {
    address: account.address,
    signTransaction: (tx) => account.signTransaction(tx),
  };
}

/**
 * The configured hot wallet's signer, or undefined when none is configured (no CRYPTO payouts on this process).
 * The file wins over the variable; readCryptoConfig already refuses the variable outside sandbox.
 */
export function hotWalletSigner(config: CryptoConfig): TransactionSigner | undefined {
  if (config.hotWalletKeyFile) {
    let key: string;
    try {
      key = readFileSync(config.hotWalletKeyFile, 'utf8');
    } catch (err) {
      // The read failed before any key was in memory: its error names the path and the cause, never a key.
      throw new Error(`CRYPTO_HOT_WALLET_KEY_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, {
        cause: err,
      });
    }
    return localKeySigner(key, 'CRYPTO_HOT_WALLET_KEY_FILE');
  }
  if (config.hotWalletKey) return localKeySigner(config.hotWalletKey, 'CRYPTO_HOT_WALLET_KEY');
  return undefined;
}
