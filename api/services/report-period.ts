// The report window moved to domain/report-period.ts (db/repositories/reports.ts splits it too); this name stays
// for the schemas that import the period bound from here.
export { periodBoundSchema } from '../../domain/report-period';
