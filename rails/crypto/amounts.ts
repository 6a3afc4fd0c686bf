// Token units ⇄ Cambio amounts. Cambio keeps every stablecoin at 6 decimal places; a token's own `decimals()` may
// differ. A conversion is exact or refused: a transfer carrying dust below Cambio's scale is not rounded into a
// balance (it is UNMATCHED, for an operator), and an amount Cambio sends always has a whole number of token units.

/** Cambio's scale for stablecoins. */
export const CAMBIO_DECIMALS = 6;

/** An amount that does not convert exactly (dust below 6 places, a negative or malformed amount). */
export class InexactAmountError extends Error {
  override readonly name = 'InexactAmountError';
}

const POW10 = (n: number): bigint => 10n ** BigInt(n);

/** `units` of a token with `decimals` as Cambio's decimal string (6 places); InexactAmountError on dust. */
export function unitsToAmount(units: bigint, decimals: number): string {
  if (units < 0n) throw new InexactAmountError(`a negative token amount (${units})`);
  let micro = units;
  if (decimals > CAMBIO_DECIMALS) {
    const divisor = POW10(decimals - CAMBIO_DECIMALS);
    if (units % divisor !== 0n) {
      throw new InexactAmountError(
        `${units} units of a ${decimals}-decimal token carry dust below Cambio's ${CAMBIO_DECIMALS} decimal places`,
      );
    }
    micro = units / divisor;
  } else if (decimals < CAMBIO_DECIMALS) {
    micro = units * POW10(CAMBIO_DECIMALS - decimals);
  }
  const whole = micro / POW10(CAMBIO_DECIMALS);
  const fraction = (micro % POW10(CAMBIO_DECIMALS)).toString().padStart(CAMBIO_DECIMALS, '0');
  return `${whole}.${fraction}`;
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** A Cambio amount (`12.5`, `12.500000`) in units of a token with `decimals`; InexactAmountError if it cannot be. */
export function amountToUnits(amount: string, decimals: number): bigint {
  const parts = DECIMAL.exec(amount.trim());
  if (!parts) throw new InexactAmountError(`"${amount}" is not a decimal amount`);
  const whole = parts[1];
  const fraction = (parts[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) {
    throw new InexactAmountError(`${amount} has more decimal places than the token's ${decimals}`);
  }
  return BigInt(whole) * POW10(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}
