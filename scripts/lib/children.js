'use strict';
// Child processes for the start and test scripts: output prefixed line by line (`[api] ...`), an `exited`
// promise, and a stop() that asks politely (SIGTERM) and then insists (SIGKILL).

const { spawn } = require('node:child_process');

/** Copies a readable stream to `out`, one line at a time, each line prefixed. */
function prefixLines(stream, prefix, out) {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) out.write(`${prefix} ${line.replace(/\r$/, '')}\n`);
  });
  stream.on('end', () => {
    if (pending) out.write(`${prefix} ${pending}\n`);
    pending = '';
  });
}

/**
 * Spawns `command args` with stdout/stderr prefixed by `[name]` (options: cwd, env, quietStdout to drop stdout,
 * quietAfterStop to drop all output once stop() was called). Returns
 * `{ name, proc, exited, running(), stop(timeoutMs) }`; `exited` resolves to `{ code, signal }` and never rejects
 * (a spawn error resolves with code 127 after printing the error).
 */
function spawnChild(name, command, args, options = {}) {
  const prefix = `[${name}]`;
  const proc = spawn(command, args, {
    cwd: options.cwd,
    env: options.env || process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let done = false;
  let stopping = false;
  // quietAfterStop: drop the output a process writes while shutting down on our request (the Temporal dev
  // server logs a screenful of harmless connection warnings then).
  const sink = (out) => ({ write: (s) => (options.quietAfterStop && stopping ? true : out.write(s)) });
  if (options.quietStdout) proc.stdout.resume();
  else prefixLines(proc.stdout, prefix, sink(process.stdout));
  prefixLines(proc.stderr, prefix, sink(process.stderr));
  const exited = new Promise((resolve) => {
    proc.once('error', (err) => {
      if (done) return;
      done = true;
      process.stderr.write(`${prefix} could not start ${command}: ${err.message}\n`);
      resolve({ code: 127, signal: null });
    });
    // 'close' (not 'exit'): fires after the output streams ended, so the last lines are printed first.
    proc.once('close', (code, signal) => {
      if (done) return;
      done = true;
      resolve({ code, signal });
    });
  });
  const child = {
    name,
    proc,
    exited,
    running: () => !done,
    async stop(timeoutMs = 10000) {
      if (done) return exited;
      stopping = true;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!done) {
          process.stderr.write(`${prefix} did not stop within ${timeoutMs} ms; killing it\n`);
          proc.kill('SIGKILL');
        }
      }, timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  return child;
}

/** "exit code 1" / "signal SIGKILL", for messages. */
function describeExit({ code, signal }) {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

module.exports = { prefixLines, spawnChild, describeExit };
