// Open Exchange Rates over HTTP: `GET {OXR_URL}/api/latest.json?app_id=...`, the body as text (translation.ts reads
// its numbers without JS numbers). No business rule here.
import { getText } from '../source';

export interface OxrSettings {
  url: string;
  appId: string;
}

export function latestUrl(settings: OxrSettings): string {
  return `${settings.url}/api/latest.json?app_id=${encodeURIComponent(settings.appId)}`;
}

export function fetchLatestJson(settings: OxrSettings, signal: AbortSignal): Promise<string> {
  return getText('oxr', latestUrl(settings), signal, 'application/json');
}
