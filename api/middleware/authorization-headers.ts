/**
 * How many Authorization headers the request carries (Node keeps the first in `headers`); a scan of the raw list,
 * which is cheaper per request than building `headersDistinct`.
 */
export function authorizationHeaders(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization') n += 1;
  }
  return n;
}
