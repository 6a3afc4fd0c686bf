import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Local HTTP servers speaking the rate sources' public shapes (../shared/spec/decisions.md, "Live exchange rates"):
 * Open Exchange Rates' latest.json, the Central Bank's PTAX over Olinda OData, the ECB's eurofxref-daily.xml. Each
 * answer is text the test sets, so a number keeps the digits the test wrote; `hangMs` holds a source's answer.
 */
export interface FakeSource {
  /** The body, or a status without one. */
  body?: string;
  status?: number;
  hangMs?: number;
  /** Sent in chunks without a Content-Length, as a stream whose size is known only at its end. */
  chunked?: boolean;
}

export interface FakeRateSources {
  url: string;
  oxr: FakeSource;
  /** PTAX by day (`MM-DD-YYYY`): a day without an entry answers an empty value list (a weekend, a holiday). */
  ptaxDays: Map<string, string>;
  ecb: FakeSource;
  /** Every path asked, decoded, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** latest.json with each rate written as given: `5.4012` stays a JSON number, `'"5,41"'` is a JSON string. */
export function oxrLatest(timestampSeconds: number, rates: Record<string, string>): string {
  const entries = Object.entries(rates).map(([c, v]) => `"${c}": ${v}`);
  return (
    `{"disclaimer": "Usage subject to terms", "license": "https://openexchangerates.org/license", ` +
    `"timestamp": ${timestampSeconds}, "base": "USD", "rates": {${entries.join(', ')}}}`
  );
}

/** One day of CotacaoMoedaDia: bulletins as `[compra, venda, 'YYYY-MM-DD HH:MM:SS.mmm', tipoBoletim]`. */
export function ptaxDay(bulletins: [string, string, string, string][]): string {
  const value = bulletins.map(
    ([compra, venda, at, tipo]) =>
      `{"paridadeCompra": 1.0000, "paridadeVenda": 1.0000, "cotacaoCompra": ${compra}, "cotacaoVenda": ${venda}, ` +
      `"dataHoraCotacao": "${at}", "tipoBoletim": "${tipo}"}`,
  );
  return `{"@odata.context": "https://olinda.bcb.gov.br/olinda/servico/PTAX/versao/v1/odata$metadata", "value": [${value.join(', ')}]}`;
}

/** eurofxref-daily.xml as the ECB writes it: single-quoted attributes, units per 1 EUR. */
export function ecbDaily(day: string, rates: Record<string, string>): string {
  const cubes = Object.entries(rates).map(([c, r]) => `\t\t\t<Cube currency='${c}' rate='${r}'/>`);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">`,
    `\t<gesmes:subject>Reference rates</gesmes:subject>`,
    `\t<gesmes:Sender>`,
    `\t\t<gesmes:name>European Central Bank</gesmes:name>`,
    `\t</gesmes:Sender>`,
    `\t<Cube>`,
    `\t\t<Cube time='${day}'>`,
    ...cubes,
    `\t\t</Cube>`,
    `\t</Cube>`,
    `</gesmes:Envelope>`,
  ].join('\n');
}

const PTAX_PATH = '/olinda/servico/PTAX/versao/v1/odata/CotacaoMoedaDia(moeda=@moeda,dataCotacao=@dataCotacao)';

export async function startFakeRateSources(): Promise<FakeRateSources> {
  const sources = {
    oxr: {} as FakeSource,
    ptaxDays: new Map<string, string>(),
    ecb: {} as FakeSource,
    requests: [] as string[],
  };
  const answer = async (res: http.ServerResponse, s: FakeSource, type: string) => {
    if (s.hangMs) await new Promise((r) => setTimeout(r, s.hangMs));
    if (res.destroyed) return;
    const status = s.status ?? (s.body === undefined ? 404 : 200);
    if (!s.chunked) {
      res.writeHead(status, { 'content-type': type });
      return void res.end(s.body ?? '');
    }
    res.writeHead(status, { 'content-type': type, 'transfer-encoding': 'chunked' });
    const body = s.body ?? '';
    for (let at = 0; at < body.length && !res.destroyed; at += 65_536) {
      if (!res.write(body.slice(at, at + 65_536))) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    sources.requests.push(decodeURIComponent(url.pathname + url.search));
    if (url.pathname === '/api/latest.json') {
      if (url.searchParams.get('app_id') !== 'test-app-id') {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end('{"error": true, "status": 401, "message": "invalid_app_id"}');
      }
      return void answer(res, sources.oxr, 'application/json');
    }
    if (decodeURIComponent(url.pathname) === PTAX_PATH) {
      const day = (url.searchParams.get('@dataCotacao') ?? '').replace(/'/g, '');
      const body = sources.ptaxDays.get(day) ?? ptaxDay([]);
      return void answer(res, { body }, 'application/json');
    }
    if (url.pathname === '/stats/eurofxref/eurofxref-daily.xml') return void answer(res, sources.ecb, 'text/xml');
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(sources, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
