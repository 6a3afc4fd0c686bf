import { createHash } from 'node:crypto';

/** Digits derived from a seed (the operation id): the same deposit always shows the same instructions. */
export function sandboxDigits(seed: string, n: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  let out = '';
  for (let i = 0; out.length < n; i++) out += (parseInt(hex[i % hex.length], 16) % 10).toString();
  return out;
}
