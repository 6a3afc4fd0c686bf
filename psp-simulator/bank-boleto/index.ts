import type { SimulatedProvider } from '../provider';
import { BoletoBank } from './bank';

// The bank of boletos (bank.ts) as one of the simulator's providers: its state in a file beside the PSP's, its
// OAuth2 clients its own (BANK_SIM_CLIENT_ID/_SECRET, by default the pair Cambio presents as BOLETO_CLIENT_*).

export const bankBoletoProvider: SimulatedProvider = {
  name: 'bank-boleto',
  chosenBy: 'BOLETO_BANK_URL',
  settings: (base) => ({ BOLETO_BANK_URL: base }),
  startLine: (base) => `Simulated bank (boletos): ${base}`,
  ready: { label: 'BOLETO bank', none: 'none: operators record boletos (cambio payment record)' },
  mount({ stateFile, env }) {
    const bank = new BoletoBank({
      stateFile: stateFile.replace(/(\.json)?$/, '-bank-boleto.json'),
      clients: {
        [env.BANK_SIM_CLIENT_ID || env.BOLETO_CLIENT_ID || 'cambio']:
          env.BANK_SIM_CLIENT_SECRET || env.BOLETO_CLIENT_SECRET || 'cambio-dev-boleto-secret',
      },
      tokenTtlSeconds: Number(env.PSP_SIM_TOKEN_TTL_SECONDS || 3600),
    });
    return { middleware: bank.middleware(), tick: () => bank.tick() };
  },
};
