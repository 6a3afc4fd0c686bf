import type { SimulatedProvider } from '../provider';
import { API_BASE } from './layout';

// The PSP that speaks API Pix: the simulator's core (simulator.ts and the routes-*.ts beside it serve it, with the
// OAuth2 token and the bearer check every other path of the process but the providers' goes through). Here only
// what a Cambio that uses it is given.

export const apiPixProvider: SimulatedProvider = {
  name: 'api-pix',
  chosenBy: 'PIX_PSP_URL',
  // The API's base, below the simulator's origin as API Pix's servers are (`/api`); the token is at the origin.
  settings: (base) => ({ PIX_PSP_URL: `${base}${API_BASE}` }),
  ready: { label: 'PIX PSP', none: 'none: PIX deposits and withdrawals are refused (RAIL_NOT_CONFIGURED)' },
  hint: (url) =>
    `\`cambio payment return\` sends a PIX payment back through the PSP when the CLI has PIX_PSP_URL=${url}.`,
};
