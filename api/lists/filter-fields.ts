// The field catalogue and its check live in domain/list-filters.ts, where db/lists can compile against them too;
// this name stays for the services that import the catalogue type from here.
export type { FieldCatalogue, FieldLocation, FieldSpec } from '../../domain/list-filters';
export { isIsoTimestamp, isUuid, lookupField, validateFilters } from '../../domain/list-filters';
