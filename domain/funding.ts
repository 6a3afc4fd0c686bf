import { createHash } from 'node:crypto';
import type { AssetCode } from './assets';
import type { ChargeCreated } from '../rails/rail';

export const RAILS = ['PIX_KEY', 'BOLETO', 'TED', 'CRYPTO'] as const;
export type Rail = (typeof RAILS)[number];

// docs/decisions.md: Brazilian rails pay in BRL; CRYPTO pays in a stablecoin.
const RAIL_ASSETS: Record<Rail, readonly AssetCode[]> = {
  PIX_KEY: ['BRL'],
  BOLETO: ['BRL'],
  TED: ['BRL'],
  CRYPTO: ['USDC', 'USDT', 'EURC', 'BRLT'],
};

export const railAccepts = (rail: Rail, asset: string) => (RAIL_ASSETS[rail] as readonly string[]).includes(asset);

// Sandbox networks per stablecoin: where the deposit address lives.
const NETWORKS: Record<string, string> = { USDC: 'ETHEREUM', USDT: 'TRON', EURC: 'ETHEREUM', BRLT: 'POLYGON' };

/** Digits derived from the operation id: the same deposit always shows the same instructions. */
function digits(seed: string, n: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  let out = '';
  for (let i = 0; out.length < n; i++) out += (parseInt(hex[i % hex.length], 16) % 10).toString();
  return out;
}

/** Concrete funding instructions for a deposit (sandbox: deterministic, shaped like the real thing). */
export function fundingInstruction(
  rail: Rail,
  operationId: string,
  asset: string,
  dueDate: Date,
): Record<string, string> {
  switch (rail) {
    case 'PIX_KEY':
      // An EVP (random) key dedicated to this deposit lets reconciliation match the payment to it.
      return { rail, keyType: 'EVP', key: operationId };
    case 'BOLETO':
      return {
        rail,
        barcode: `23793${digits(`${operationId}:boleto`, 42)}`,
        dueDate: dueDate.toISOString().slice(0, 10),
      };
    case 'TED':
      return {
        rail,
        bankCode: '341',
        branchCode: '0001',
        accountNumber: `${digits(`${operationId}:ted`, 8)}-${digits(`${operationId}:dv`, 1)}`,
      };
    case 'CRYPTO':
      return {
        rail,
        network: NETWORKS[asset] ?? 'ETHEREUM',
        walletAddress: `0x${createHash('sha256').update(`${operationId}:wallet`).digest('hex').slice(0, 40)}`,
      };
  }
}

/**
 * A PIX deposit's instruction when a PSP took its charge: the receiving key, the charge's txid and `location`,
 * the dynamic BR Code ("Pix Copia e Cola") any bank app pays, and when the charge stops taking payments.
 */
export function pixChargeInstruction(charge: ChargeCreated): Record<string, string> {
  return {
    rail: 'PIX_KEY',
    keyType: charge.keyType,
    key: charge.key,
    txid: charge.chargeId,
    location: charge.location,
    pixCopiaECola: charge.pixCopiaECola,
    expiresAt: charge.expiresAt,
  };
}
