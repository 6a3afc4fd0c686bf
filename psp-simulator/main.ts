import { resolve } from 'node:path';
import { Simulator } from './simulator';

// `npm run psp-simulator`: the simulated PSP on PSP_SIM_PORT (default 4010; 0 picks a free port), state in
// PSP_SIM_STATE_FILE. Prints one line, `PSP simulator listening on <url>`, that the start script and tests read.

const env = process.env;
const port = Number(env.PSP_SIM_PORT ?? 4010);
const host = env.PSP_SIM_HOST || '127.0.0.1';
const stateFile = resolve(env.PSP_SIM_STATE_FILE || '.cambio/psp-simulator.json');
const clientId = env.PSP_SIM_CLIENT_ID || env.PIX_CLIENT_ID || 'cambio';
const clientSecret = env.PSP_SIM_CLIENT_SECRET || env.PIX_CLIENT_SECRET || 'cambio-dev-pix-secret';

async function main() {
  const sim = new Simulator({
    stateFile,
    clients: { [clientId]: clientSecret },
    tokenTtlSeconds: Number(env.PSP_SIM_TOKEN_TTL_SECONDS || 3600),
    settleMs: Number(env.PSP_SIM_SETTLE_MS || 100),
    // The bank's client (TED_CLIENT_ID/SECRET of the Cambio it serves) and the collection account's id.
    bankAccounts: {
      clients: {
        [env.BANK_SIM_TED_CLIENT_ID || env.TED_CLIENT_ID || 'cambio']:
          env.BANK_SIM_TED_CLIENT_SECRET || env.TED_CLIENT_SECRET || 'cambio-dev-ted-secret',
      },
      defaultAccountId: env.BANK_SIM_ACCOUNT_ID || env.TED_ACCOUNT_ID || 'cambio-collection',
    },
    // The bank (boletos) beside the PSP, with credentials of its own, as Cambio's BOLETO_* name them.
    bank: {
      stateFile: stateFile.replace(/(\.json)?$/, '-bank-boleto.json'),
      clients: {
        [env.BANK_SIM_CLIENT_ID || env.BOLETO_CLIENT_ID || 'cambio']:
          env.BANK_SIM_CLIENT_SECRET || env.BOLETO_CLIENT_SECRET || 'cambio-dev-boleto-secret',
      },
      tokenTtlSeconds: Number(env.PSP_SIM_TOKEN_TTL_SECONDS || 3600),
    },
  });
  const url = await sim.listen(port, host);
  console.log(`PSP simulator listening on ${url} (state: ${stateFile})`);
  const stop = () => void sim.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error(`PSP simulator could not start: ${(err as Error).message}`);
  process.exit(1);
});
