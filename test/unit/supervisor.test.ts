// The `npm start` supervisor against real child processes: a worker or API that dies is started again with a
// doubling back-off, a stable run resets it, and stop() ends it all (also during a back-off).
import { expect } from 'chai';

const { supervise } = require('../../scripts/lib/supervisor');
const { spawnChild } = require('../../scripts/lib/children');

interface Child {
  exited: Promise<{ code: number | null; signal: string | null }>;
  running(): boolean;
  proc: { pid: number };
}

const node = (script: string) => (): Child => spawnChild('child', process.execPath, ['-e', script], {});
const until = async (ok: () => boolean, ms = 10000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('npm start supervisor', function () {
  this.timeout(30000);

  it('restarts a child that keeps dying, with a back-off doubling up to the maximum, and logs each crash', async () => {
    const starts: number[] = [];
    const logs: string[] = [];
    const s = supervise(
      'worker',
      () => {
        starts.push(Date.now());
        return node('process.exit(3)')();
      },
      (m: string) => logs.push(m),
      { initialDelayMs: 100, maxDelayMs: 400, stableMs: 60000 },
    );
    await until(() => starts.length >= 6);
    await s.stop(5000);
    const gaps = starts.slice(1, 6).map((t, i) => t - starts[i]);
    // Each gap is the back-off plus the time node needs to start and exit: 100, 200, 400, 400, 400 ms at least.
    [100, 200, 400, 400, 400].forEach((min, i) => expect(gaps[i], `gap ${i + 1} (${gaps})`).to.be.at.least(min));
    expect(s.restarts()).to.be.at.least(5);
    expect(logs[0]).to.match(
      /^worker exited unexpectedly \(exit code 3\) after .* s; restarting it in 0\.10 s \(restart 1\)$/,
    );
    expect(logs[2]).to.match(/restarting it in 0\.40 s \(restart 3\)$/);
  });

  it('resets the back-off after a stable run', async () => {
    const logs: string[] = [];
    let n = 0;
    // Dies quickly twice, then runs past the stable time before dying, then dies quickly again.
    const s = supervise(
      'api',
      () => {
        n += 1;
        return node(n === 3 ? 'setTimeout(() => process.exit(1), 4000)' : 'process.exit(1)')();
      },
      (m: string) => logs.push(m),
      // A stable run is 3 s: well above how long a quick exit takes even on a loaded machine (node's start-up).
      { initialDelayMs: 50, maxDelayMs: 1000, stableMs: 3000 },
    );
    await until(() => logs.length >= 4);
    await s.stop(5000);
    expect(logs.slice(0, 4).map((m) => /restarting it in ([\d.]+) s/.exec(m)![1])).to.deep.equal([
      '0.05',
      '0.10',
      '0.05',
      '0.10',
    ]);
  });

  it('stop() ends a running child and cancels a pending restart', async () => {
    let spawned = 0;
    let current: Child | undefined;
    const s = supervise(
      'worker',
      () => {
        spawned += 1;
        current = node(spawned === 1 ? 'process.exit(1)' : 'setInterval(() => {}, 1000)')();
        return current;
      },
      () => {},
      { initialDelayMs: 200, maxDelayMs: 200 },
    );
    await until(() => spawned === 2 && current!.running());
    const longLived = current!;
    await s.stop(5000);
    expect(longLived.running()).to.equal(false);
    expect((await longLived.exited).signal).to.equal('SIGTERM');

    // A child that dies, then stop() during its back-off: nothing is started again.
    let count = 0;
    const t = supervise(
      'api',
      () => {
        count += 1;
        return node('process.exit(1)')();
      },
      () => {},
      { initialDelayMs: 300 },
    );
    await until(() => t.restarts() === 1);
    await t.stop(5000);
    // Past the 300 ms back-off: the restart that must not happen would have happened by now.
    await new Promise((r) => setTimeout(r, 500));
    expect(count).to.equal(1);
  });
});
