'use strict';
// Keeps a long-running child alive for `npm start`: when it dies on its own it is started again after a back-off
// that doubles from 1 s to 30 s between quick failures and resets once a run lasted a stable minute. Crash loops
// stay visible in the log without hammering Postgres or Temporal; a one-off crash costs one second.

const { describeExit } = require('./children');

const DEFAULTS = { initialDelayMs: 1000, maxDelayMs: 30000, stableMs: 60000 };

/**
 * `start()` spawns the child (a spawnChild object: `{ exited, running(), stop(ms) }`). Returns
 * `{ name, current(), restarts(), stop(timeoutMs) }`; stop() ends the supervision, cancels a pending restart and
 * stops the running child. `log(msg)` reports each crash and restart.
 */
function supervise(name, start, log, options = {}) {
  const { initialDelayMs, maxDelayMs, stableMs } = { ...DEFAULTS, ...options };
  let stopped = false;
  let child;
  let restarts = 0;
  let delayMs = 0; // the last back-off; 0 = none yet, or reset by a stable run
  let timer;

  const launch = () => {
    const startedAt = Date.now();
    child = start();
    child.exited.then((info) => {
      if (stopped) return;
      const ranMs = Date.now() - startedAt;
      delayMs = ranMs >= stableMs || delayMs === 0 ? initialDelayMs : Math.min(delayMs * 2, maxDelayMs);
      restarts += 1;
      log(
        `${name} exited unexpectedly (${describeExit(info)}) after ${(ranMs / 1000).toFixed(1)} s; ` +
          `restarting it in ${(delayMs / 1000).toFixed(delayMs < 1000 ? 2 : 0)} s (restart ${restarts})`,
      );
      timer = setTimeout(() => {
        timer = undefined;
        if (!stopped) launch();
      }, delayMs);
    });
  };
  launch();

  return {
    name,
    current: () => child,
    restarts: () => restarts,
    async stop(timeoutMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (child && child.running()) await child.stop(timeoutMs);
    },
  };
}

module.exports = { supervise, DEFAULTS };
