import { CambioError } from '../../domain/errors';

/**
 * Refuses a query string whose percent-encoding does not spell UTF-8 (`%E9` from a Latin-1 client, an overlong
 * `%C0%AF`, a lone surrogate `%ED%A0%80`) or is broken (`100%`, `%zz`). Node's parser reads those as U+FFFD or as
 * the bare text, and a filter then searched for a name nobody wrote and answered an empty page as if none matched:
 * the client is told instead, naming the parameter (decision 0265).
 */
export function refuseUndecodableQuery(querystring: string): void {
  if (!querystring.includes('%')) return;
  for (const pair of querystring.split('&')) {
    const [name, ...value] = pair.split('=');
    if (decodes(name) && decodes(value.join('='))) continue;
    const path = `/query/${decodes(name) ? decodeURIComponent(name.replace(/\+/g, ' ')) : name}`;
    throw new CambioError('VALIDATION_ERROR', `${path} is not valid percent-encoded UTF-8`, {
      errors: [{ path, message: 'is not valid percent-encoded UTF-8' }],
    });
  }
}

function decodes(component: string): boolean {
  try {
    decodeURIComponent(component);
    return true;
  } catch {
    return false;
  }
}
