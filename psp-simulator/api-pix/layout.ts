// Where the simulated PSP serves API Pix, as the spec's `servers` lay it out (`https://pix.example.com/api/`, the
// token at `https://pix.example.com/oauth/token`): the API under API_BASE, the token and the control routes at the
// origin. Its own file: the simulator (which serves it) and the provider's settings (which name it) both read it.

/** The API's base path: what Cambio is given as PIX_PSP_URL, below the simulator's origin. */
export const API_BASE = '/api';

/** The path below API_BASE, or undefined for a path outside it. */
export const underApi = (path: string): string | undefined =>
  path.startsWith(`${API_BASE}/`) ? path.slice(API_BASE.length) : undefined;
