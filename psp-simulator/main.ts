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
    // The other providers' settings (bank-boleto/, bank-accounts/: BANK_SIM_*, by default Cambio's own pairs).
    env,
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
