// The ECB's euro foreign exchange reference rates: one GET of eurofxref-daily.xml (ECB_URL). No business rule here.
import { getText } from '../source';

export function fetchDailyXml(url: string, signal: AbortSignal): Promise<string> {
  return getText('ecb', url, signal, 'application/xml, text/xml');
}
