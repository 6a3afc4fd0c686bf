// The sandbox chain's keys, all public: anvil's well-known development mnemonic funds ten accounts with ether. Index
// 0 deploys and mints the test tokens, 1-8 are payers the tests send deposits from, 9 is the hot wallet, and 10 (given
// ether by the set-up, past anvil's ten) is the sandbox payer that the sandbox inbound-payment route sends from.
// Deposit addresses derive from an extended public key on another branch of the same mnemonic (m/44'/60'/7'), so no
// deposit address is ever one of the funded accounts.
import { HDKey, mnemonicToAccount } from 'viem/accounts';
import { mnemonicToSeedSync } from '@scure/bip39';
import { bytesToHex } from 'viem';

export const SANDBOX_MNEMONIC = 'test test test test test test test test test test test junk';

/** m/44'/60'/0'/0/index of the development mnemonic (one of anvil's funded accounts for 0-9). */
export const sandboxAccount = (index: number) => mnemonicToAccount(SANDBOX_MNEMONIC, { addressIndex: index });

export const DEPLOYER_INDEX = 0;
export const PAYER_INDICES = [1, 2, 3, 4, 5, 6, 7, 8];
export const HOT_WALLET_INDEX = 9;
/** The sandbox route's payer (EVM_SANDBOX_PAYER_KEY): apart from the tests' payers, whose nonces they drive. */
export const SANDBOX_PAYER_INDEX = 10;

/** The hot wallet's private key (hex): CRYPTO_HOT_WALLET_KEY in sandbox. Public, like the mnemonic. */
export function sandboxHotWalletKey(): `0x${string}` {
  const key = sandboxAccount(HOT_WALLET_INDEX).getHdKey().privateKey;
  if (!key) throw new Error('the development mnemonic derived no key');
  return bytesToHex(key);
}

/** The sandbox payer's private key (hex): EVM_SANDBOX_PAYER_KEY of the local chain. Public, like the mnemonic. */
export function sandboxPayerKey(): `0x${string}` {
  const key = sandboxAccount(SANDBOX_PAYER_INDEX).getHdKey().privateKey;
  if (!key) throw new Error('the development mnemonic derived no key');
  return bytesToHex(key);
}

const DEPOSIT_ACCOUNT_PATH = "m/44'/60'/7'";

function depositRoot(): HDKey {
  return HDKey.fromMasterSeed(mnemonicToSeedSync(SANDBOX_MNEMONIC)).derive(DEPOSIT_ACCOUNT_PATH);
}

/** CRYPTO_DEPOSIT_XPUB of the sandbox: the public half of m/44'/60'/7'. */
export const sandboxDepositXpub = (): string => depositRoot().publicExtendedKey;

/** The private key of sandbox deposit `index` (`0/index` below the xpub): tests sweep or check with it. */
export function sandboxDepositKey(index: number): `0x${string}` {
  const key = depositRoot().deriveChild(0).deriveChild(index).privateKey;
  if (!key) throw new Error('no private key');
  return bytesToHex(key);
}
