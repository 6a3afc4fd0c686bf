import { expect } from 'chai';
import { HDKey } from 'viem/accounts';
import { checkedAddress, depositAddress, parseDepositXpub } from '../../rails/crypto/addresses';
import { amountToUnits, InexactAmountError, unitsToAmount } from '../../rails/crypto/amounts';
import { readCryptoConfig } from '../../rails/crypto/config';
import { canonicalTransferReference } from '../../rails/crypto/reference';
import { sandboxAccount, sandboxDepositKey, sandboxDepositXpub } from '../../sandbox-chain/accounts';
import { privateKeyToAddress } from 'viem/accounts';

describe('CRYPTO rail: amounts, addresses and settings', () => {
  it('converts token units to 6 decimals exactly, whatever the token has', () => {
    expect(unitsToAmount(12_500_000n, 6)).to.equal('12.500000');
    expect(unitsToAmount(1n, 6)).to.equal('0.000001');
    expect(unitsToAmount(12_500_000_000_000_000_000n, 18)).to.equal('12.500000');
    expect(unitsToAmount(125n, 1)).to.equal('12.500000');
    expect(unitsToAmount(0n, 6)).to.equal('0.000000');
  });

  it("reads a transfer reference an operator typed in the scanner's form: hash in lower case, no padding", () => {
    const hash = `0x${'ab'.repeat(32)}`;
    expect(canonicalTransferReference(`31337:0x${'AB'.repeat(32)}:07`)).to.equal(`31337:${hash}:7`);
    expect(canonicalTransferReference(`031337:${hash}:0`)).to.equal(`31337:${hash}:0`);
    expect(canonicalTransferReference(`31337:${hash}:12`)).to.equal(`31337:${hash}:12`);
    // Not a transfer reference (a bare hash, anything else): as typed.
    expect(canonicalTransferReference(`0x${'AB'.repeat(32)}`)).to.equal(`0x${'AB'.repeat(32)}`);
  });

  it('refuses dust below 6 decimals rather than rounding it away', () => {
    expect(() => unitsToAmount(12_500_000_000_000_000_001n, 18)).to.throw(InexactAmountError, /dust/);
    expect(() => unitsToAmount(-1n, 6)).to.throw(InexactAmountError);
  });

  it('converts an amount to token units exactly, or refuses', () => {
    expect(amountToUnits('12.500000', 6)).to.equal(12_500_000n);
    expect(amountToUnits('12.5', 18)).to.equal(12_500_000_000_000_000_000n);
    expect(amountToUnits('12.50', 2)).to.equal(1250n);
    expect(() => amountToUnits('12.501', 2)).to.throw(InexactAmountError, /decimal places/);
    expect(() => amountToUnits('-1', 6)).to.throw(InexactAmountError);
    expect(() => amountToUnits('1e3', 6)).to.throw(InexactAmountError);
  });

  it('derives EIP-55 deposit addresses at 0/i below the xpub, whose private keys it never holds', () => {
    const xpub = parseDepositXpub(sandboxDepositXpub());
    const first = depositAddress(xpub, 0);
    expect(first).to.match(/^0x[0-9a-fA-F]{40}$/);
    expect(checkedAddress(first)).to.equal(first);
    expect(first).to.not.equal(first.toLowerCase());
    // The holder of the private key (here the sandbox mnemonic) controls the address Cambio shows.
    expect(privateKeyToAddress(sandboxDepositKey(0))).to.equal(first);
    expect(privateKeyToAddress(sandboxDepositKey(7))).to.equal(depositAddress(xpub, 7));
    expect(depositAddress(xpub, 1)).to.not.equal(first);
    // Never one of the funded sandbox accounts (another branch of the mnemonic).
    expect(first).to.not.equal(sandboxAccount(0).address);
    expect(() => depositAddress(xpub, -1)).to.throw(/index/);
  });

  it('refuses an extended private key and a malformed xpub', () => {
    const xprv = HDKey.fromMasterSeed(new Uint8Array(32).fill(7)).privateExtendedKey;
    expect(() => parseDepositXpub(xprv)).to.throw(/private key/);
    expect(() => parseDepositXpub('xpub-nonsense')).to.throw(/CRYPTO_DEPOSIT_XPUB/);
  });

  it('tells a malformed or mis-checksummed wallet address', () => {
    const address = sandboxAccount(1).address;
    expect(checkedAddress(address.toLowerCase())).to.equal(address);
    const flipped = address.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(checkedAddress(flipped)).to.equal(undefined);
    expect(checkedAddress('0x1234')).to.equal(undefined);
  });

  it('reads its settings with the documented defaults, and refuses a bad one', () => {
    const config = readCryptoConfig({ EVM_TOKEN_USDC: sandboxAccount(1).address });
    expect(config).to.include({ network: 'ETHEREUM', scanEverySeconds: 5, maxBlockRange: 1000, confirmations: 12 });
    expect(config.rpcUrl).to.equal(undefined);
    expect(config.tokens).to.deep.equal({ USDC: sandboxAccount(1).address });
    expect(() => readCryptoConfig({ EVM_TOKEN_USDT: '0x12' })).to.throw(/EVM_TOKEN_USDT/);
    expect(() => readCryptoConfig({ CRYPTO_HOT_WALLET_KEY: '0x01' })).to.throw(/sandbox mode only/);
  });
});
