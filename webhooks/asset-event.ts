/**
 * ASSET_ACTIVATED (the spec does not show its payload; decision 0025): which asset of which account became
 * usable, and when.
 */
export function assetActivatedPayload(input: { customerId: string; accountId: string; asset: string; atTime: Date }) {
  return {
    customerId: input.customerId,
    accountId: input.accountId,
    asset: input.asset,
    status: 'ACTIVE',
    atTime: input.atTime.toISOString(),
  };
}
