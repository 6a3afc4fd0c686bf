import type { SimulatedProvider } from '../provider';
import { BANK_ACCOUNTS_BASE, bankAccountsRoutes } from './routes';

// The bank's Open Finance accounts API (routes.ts) as one of the simulator's providers: the TEDs its collection
// account received, read by Cambio's poll. Its OAuth2 client is its own (BANK_SIM_TED_CLIENT_ID/_SECRET, by default
// the pair Cambio presents as TED_CLIENT_*), apart from the boleto API's, as two products of one bank.

export const bankAccountsProvider: SimulatedProvider = {
  name: 'bank-accounts',
  chosenBy: 'TED_ACCOUNTS_URL',
  settings: (base) => ({ TED_ACCOUNTS_URL: `${base}${BANK_ACCOUNTS_BASE}` }),
  startLine: (base) => `Simulated bank (TED credits): ${base}${BANK_ACCOUNTS_BASE}`,
  ready: { label: 'TED bank', none: 'none: operators (or the sandbox route) record TED payments' },
  mount({ stateFile, env }) {
    const middleware = bankAccountsRoutes({
      stateFile: stateFile.replace(/(\.json)?$/, '.bank-accounts.json'),
      clients: {
        [env.BANK_SIM_TED_CLIENT_ID || env.TED_CLIENT_ID || 'cambio']:
          env.BANK_SIM_TED_CLIENT_SECRET || env.TED_CLIENT_SECRET || 'cambio-dev-ted-secret',
      },
      defaultAccountId: env.BANK_SIM_ACCOUNT_ID || env.TED_ACCOUNT_ID || 'cambio-collection',
    });
    return { middleware };
  },
};
