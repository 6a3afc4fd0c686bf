// Deposit addresses: deposit i receives at the address of the non-hardened path `0/i` below CRYPTO_DEPOSIT_XPUB
// (BIP-32). Only the extended public key is here: whoever holds its private key sweeps the deposits, no Cambio
// process can. The address is shown EIP-55 (mixed-case checksum), as wallets expect.
import { secp256k1 } from '@noble/curves/secp256k1';
import { bytesToHex, getAddress, isAddress } from 'viem';
import { HDKey, publicKeyToAddress } from 'viem/accounts';

/** The highest index a non-hardened BIP-32 child may have. */
const MAX_INDEX = 2 ** 31 - 1;

/** The extended public key, parsed once; throws on one that is not a BIP-32 key (or holds a private key). */
export function parseDepositXpub(xpub: string): HDKey {
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(xpub);
  } catch (err) {
    throw new Error(`CRYPTO_DEPOSIT_XPUB is not a BIP-32 extended public key: ${(err as Error).message}`, {
      cause: err,
    });
  }
  // An xprv would put the deposits' private keys in this process: refused.
  if (key.privateKey) throw new Error('CRYPTO_DEPOSIT_XPUB holds a private key (xprv); give its public key (xpub)');
  return key;
}

/** The EIP-55 address of deposit `index` (path `0/index` below the extended public key). */
export function depositAddress(xpub: HDKey, index: number): `0x${string}` {
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
    throw new Error(`a deposit address index is 0..${MAX_INDEX}, got ${index}`);
  }
  const child = xpub.deriveChild(0).deriveChild(index);
  if (!child.publicKey) throw new Error('the extended key derived no public key');
  // BIP-32 gives the compressed key; an Ethereum address hashes both coordinates.
  const uncompressed = secp256k1.ProjectivePoint.fromHex(child.publicKey).toRawBytes(false);
  return publicKeyToAddress(bytesToHex(uncompressed));
}

/** A wallet address in EIP-55 form, or undefined when it is malformed or its mixed case fails the checksum. */
export function checkedAddress(address: string): `0x${string}` | undefined {
  if (!isAddress(address, { strict: true })) return undefined;
  return getAddress(address);
}
