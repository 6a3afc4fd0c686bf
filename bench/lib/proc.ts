// Process figures from /proc (Linux only): resident memory of a pid, and CPU time spent by groups of
// processes (API, worker, Temporal, Postgres, the bench itself) over a measurement window, so a bench can
// say what bounds it instead of guessing.
import fs from 'node:fs';
import os from 'node:os';

const CLK_TCK = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

export interface Rss {
  /** VmRSS: resident now, MiB. */
  rssMb: number;
  /** VmHWM: peak resident since start, MiB. */
  peakMb: number;
}

/** VmRSS / VmHWM of `pid` in MiB, or undefined when the process is gone or /proc is not there. */
export function rssOf(pid: number | undefined): Rss | undefined {
  if (!pid) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** utime + stime of `pid` in seconds, or undefined when it is gone. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // fields 14 and 15 of the full line
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

function allPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/**
 * Postgres processes that work for us: backends connected to one of `databases` (their title reads
 * `postgres: 15/main: <user> <database> <host>(<port>) <state>`) and the server's background processes
 * (WAL writer, checkpointer, ...), which every database shares. Other databases' backends are left out.
 */
export function postgresPids(databases: string[]): number[] {
  const pids: number[] = [];
  for (const pid of allPids()) {
    const cmd = cmdline(pid);
    if (!cmd.startsWith('postgres:')) continue;
    const backend = /^postgres: [^:]+: (\S+) (\S+) \S+\(\d+\)/.exec(cmd);
    if (!backend || databases.includes(backend[2])) pids.push(pid);
  }
  return pids;
}

/** Whole-machine CPU time (all cores) in seconds: busy and total, from /proc/stat. */
function machineCpu(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = v;
  const idleAll = idle + iowait;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / CLK_TCK, total: (busy + idleAll) / CLK_TCK };
}

export type PidSource = () => number[];

export interface CpuReport {
  wallSeconds: number;
  cores: number;
  /** Per group: CPU seconds and % of one core over the window. */
  groups: Array<{ name: string; cpuSeconds: number; pctOfCore: number }>;
  /** Whole machine: % of all cores busy, and the part not explained by the groups (other tenants of the box). */
  machineBusyPct: number;
  otherPctOfCore: number;
}

/**
 * CPU meter over a window: `start()` snapshots every group's processes (a pid that appears later counts
 * from zero, e.g. a Postgres backend a pool opened during the run), `stop()` reports the differences.
 * The group "bench" is this process (load generator, and in-process workers when a bench has them).
 */
export class CpuMeter {
  private before = new Map<string, Map<number, number>>();
  private machineBefore = machineCpu();
  private selfBefore = process.cpuUsage();
  private started = process.hrtime.bigint();

  constructor(private readonly groups: Record<string, PidSource>) {}

  start(): void {
    this.before.clear();
    for (const [name, source] of Object.entries(this.groups)) {
      const m = new Map<number, number>();
      for (const pid of source()) m.set(pid, cpuSecondsOf(pid) ?? 0);
      this.before.set(name, m);
    }
    this.machineBefore = machineCpu();
    this.selfBefore = process.cpuUsage();
    this.started = process.hrtime.bigint();
  }

  stop(): CpuReport {
    const wallSeconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    const groups: CpuReport['groups'] = [];
    let explained = 0;
    for (const [name, source] of Object.entries(this.groups)) {
      const before = this.before.get(name) ?? new Map<number, number>();
      let seconds = 0;
      const pids = new Set([...source(), ...before.keys()]);
      for (const pid of pids) {
        const now = cpuSecondsOf(pid);
        if (now === undefined) continue; // exited during the window: its time is lost (rare)
        seconds += now - (before.get(pid) ?? 0);
      }
      explained += seconds;
      groups.push({ name, cpuSeconds: seconds, pctOfCore: (100 * seconds) / wallSeconds });
    }
    const self = process.cpuUsage(this.selfBefore);
    const selfSeconds = (self.user + self.system) / 1e6;
    explained += selfSeconds;
    groups.push({ name: 'bench process', cpuSeconds: selfSeconds, pctOfCore: (100 * selfSeconds) / wallSeconds });
    const machine = machineCpu();
    const busy = machine.busy - this.machineBefore.busy;
    const total = machine.total - this.machineBefore.total;
    const cores = os.cpus().length;
    return {
      wallSeconds,
      cores,
      groups,
      machineBusyPct: total > 0 ? (100 * busy) / total : 0,
      otherPctOfCore: Math.max(0, (100 * (busy - explained)) / wallSeconds),
    };
  }
}

/**
 * The box is shared (other people's builds and tests): before a measured phase, wait until the machine was
 * less than `maxBusyPct` % busy (all cores) over a 1 s sample, for at most `timeoutMs`. Returns the last
 * sample; a bench prints "other (not ours)" CPU per phase anyway, so a noisy phase is visible.
 */
export async function waitForQuiet(maxBusyPct = 25, timeoutMs = 60000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = machineCpu();
    await new Promise((r) => setTimeout(r, 1000));
    const b = machineCpu();
    const busyPct = (100 * (b.busy - a.busy)) / Math.max(1e-9, b.total - a.total);
    if (busyPct < maxBusyPct || Date.now() > deadline) return busyPct;
  }
}
