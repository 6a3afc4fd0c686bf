// Plain-text tables for bench output.
import type { CpuReport } from './proc';
import type { Rss } from './proc';

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function fmt(n: number, digits = 1): string {
  if (!Number.isFinite(n)) return '-';
  return n.toFixed(digits);
}

export const ok = (pass: boolean) => (pass ? 'PASS' : 'MISS');

export function cpuTable(cpu: CpuReport): string {
  const rows = cpu.groups.map((g) => [g.name, fmt(g.cpuSeconds, 2), fmt(g.pctOfCore)]);
  rows.push(['other (not ours)', '', fmt(cpu.otherPctOfCore)]);
  return [
    table(['CPU over the window', 'cpu s', '% of 1 core'], rows),
    `machine: ${cpu.cores} cores, ${fmt(cpu.machineBusyPct)}% busy over ${fmt(cpu.wallSeconds, 1)} s`,
  ].join('\n');
}

/**
 * Each process's CPU per completed operation in each phase, a column per phase: the process whose figure grows
 * between phases is where the added load's cost lands.
 */
export function cpuPerOperation(phases: Array<[name: string, cpu: CpuReport, completed: number]>): string {
  const names = [...new Set(phases.flatMap(([, cpu]) => cpu.groups.map((g) => g.name)))];
  const rows = names.map((name) => [
    name,
    ...phases.map(([, cpu, completed]) => {
      const group = cpu.groups.find((g) => g.name === name);
      return group && completed > 0 ? fmt((group.cpuSeconds * 1000) / completed, 2) : '-';
    }),
  ]);
  rows.push(['machine busy %', ...phases.map(([, cpu]) => fmt(cpu.machineBusyPct))]);
  return table(['process', ...phases.map(([name]) => name)], rows);
}

export function rssLine(name: string, rss: Rss | undefined): Array<string | number> {
  return [name, rss ? fmt(rss.rssMb) : '-', rss ? fmt(rss.peakMb) : '-'];
}

export function banner(title: string): void {
  console.log(`\n=== ${title} ${'='.repeat(Math.max(0, 72 - title.length))}`);
}
