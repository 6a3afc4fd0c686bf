// What each rail's settings module (rails/<name>/config.ts) gives config/: how its part of Config is read, and which
// of its variables a deployment outside sandbox mode must hold a secret of its own in (config/production.ts).
// rails/settings.ts lists one per rail.

export interface RailSettings<C> {
  /** Its part of Config (`config.<key>`, the key rails/settings.ts gives it), from the environment. */
  read(env: NodeJS.ProcessEnv): C;
  /**
   * The values this repository publishes for the rail's secrets (its defaults, the simulator's, the benches'):
   * refused outside sandbox mode in any secret variable.
   */
  sandboxOnlyValues: readonly string[];
  /** The rail's secret variables a process outside sandbox mode must set, given its environment (its provider's). */
  secrets(env: NodeJS.ProcessEnv): string[];
}
