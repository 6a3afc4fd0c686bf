import type Koa from 'koa';

// What one simulated provider is (a folder under psp-simulator/ whose index.ts exports one): the paths it serves
// in the simulator's process, and the settings a Cambio that uses it needs. providers.ts lists them; simulator.ts
// mounts each, and `npm start` (scripts/start.js) reads each one's settings, so neither names a provider.

/** What a provider is given when the simulator starts: where state lives, and the process's environment. */
export interface ProviderStart {
  /** The simulator's own state file: a provider keeps its state in a file beside it. */
  stateFile: string;
  env: NodeJS.ProcessEnv;
}

/** A provider as it runs in the simulator's process. */
export interface MountedProvider {
  /**
   * Its API and its control routes (`/sim/<its name>/...`), mounted before the PSP's bearer check (each checks its
   * own tokens) and after the faults of `/sim/faults`; anything not its own goes on.
   */
  middleware: Koa.Middleware;
  /** Work due on the simulator's ticker (notices sent with retries). */
  tick?(): Promise<void>;
}

export interface SimulatedProvider {
  /** Its folder's name. */
  name: string;
  /**
   * The variable that, set by whoever starts Cambio, names a real provider instead of this one: `npm start` then sets
   * nothing of `settings`.
   */
  chosenBy: string;
  /** The variables a Cambio that uses this provider at `base` (the simulator's URL) is given; `chosenBy` among them. */
  settings(base: string): Record<string, string>;
  /** What `npm start` logs when it sets them. */
  startLine?(base: string): string;
  /**
   * The line of `npm start`'s ready block: a label, and what it shows when nobody provides this (neither the user nor
   * the simulator: outside sandbox mode). Shown with the value of `chosenBy`.
   */
  ready?: { label: string; none: string };
  /** A line after the ready block, when Cambio has a provider at `url` (the value of `chosenBy`). */
  hint?(url: string): string;
  /** Its paths in the simulator's process; absent when the simulator's core serves them (api-pix/). */
  mount?(start: ProviderStart): MountedProvider;
}
