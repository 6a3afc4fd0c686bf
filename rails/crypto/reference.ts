// A CRYPTO payment's rail reference, `{chainId}:{txHash}:{logIndex}` (decision 0131), in the one form the deposit
// scanner records it: the hash in lower case, the numbers without leading zeros. An operator may type the same
// transfer otherwise (an explorer's or a spreadsheet's capitals, a padded index); recorded as typed, it would be a
// second payment of money that arrived once (decision 0222).

const REFERENCE = /^(\d+):0x([0-9a-f]{64}):(\d+)$/i;

/** `typed` in the scanner's form when it is a transfer reference; anything else (a bare hash) as it is. */
export function canonicalTransferReference(typed: string): string {
  const match = REFERENCE.exec(typed);
  if (!match) return typed;
  return `${BigInt(match[1])}:0x${match[2].toLowerCase()}:${BigInt(match[3])}`;
}

/** The parts of a transfer reference (any case), or undefined when `reference` is not one. */
export function transferReferenceParts(
  reference: string,
): { chainId: number; hash: `0x${string}`; logIndex: number } | undefined {
  const match = REFERENCE.exec(reference);
  if (!match) return undefined;
  return { chainId: Number(match[1]), hash: `0x${match[2]}`, logIndex: Number(match[3]) };
}
