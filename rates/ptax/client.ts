// The Central Bank's PTAX over its Olinda OData service: one day's bulletins of one currency against BRL. No
// business rule here (which day counts is translation.ts's and index.ts's).
import { getText } from '../source';

/** `MM-DD-YYYY`, as the service wants `@dataCotacao`, of a calendar day given as `YYYY-MM-DD`. */
export const odataDate = (day: string) => `${day.slice(5, 7)}-${day.slice(8, 10)}-${day.slice(0, 4)}`;

export function dayUrl(baseUrl: string, currency: string, day: string): string {
  return (
    `${baseUrl}/olinda/servico/PTAX/versao/v1/odata/CotacaoMoedaDia(moeda=@moeda,dataCotacao=@dataCotacao)` +
    `?@moeda='${currency}'&@dataCotacao='${odataDate(day)}'&$format=json`
  );
}

export function fetchDay(baseUrl: string, currency: string, day: string, signal: AbortSignal): Promise<string> {
  return getText('ptax', dayUrl(baseUrl, currency, day), signal, 'application/json');
}
