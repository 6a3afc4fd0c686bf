import type { ActivityDeps } from './deps';

/** All activities, bound to their dependencies. Workflows `import type` this to proxy them. */
export function createActivities(deps: ActivityDeps) {
  return {
  };
}

export type Activities = ReturnType<typeof createActivities>;
