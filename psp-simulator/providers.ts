import { apiPixProvider } from './api-pix';
import { bankAccountsProvider } from './bank-accounts';
import { bankBoletoProvider } from './bank-boleto';
import type { SimulatedProvider } from './provider';
import { ratesProvider } from './rates';

// Every provider the simulator plays, one per folder of psp-simulator/ (test/unit/rail-registry.test.ts fails when
// a folder with an index.ts is missing here). simulator.ts mounts them in this order; `npm start` gives Cambio each
// one's settings and prints its lines in this order. A list rather than a directory read: the shape is type-checked
// where it is written, and the order is the code's, not the file system's.
export const SIMULATED_PROVIDERS: readonly SimulatedProvider[] = [
  apiPixProvider,
  bankBoletoProvider,
  bankAccountsProvider,
  ratesProvider,
];
