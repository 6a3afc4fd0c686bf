// Summarises V8 CPU profiles written by a bench run with BENCH_CPU_PROF=1 (bench/.profiles/*.cpuprofile):
// self time by package / project folder, and the top functions by self time.
//   npx tsx bench/profile-summary.ts bench/.profiles/api-*.cpuprofile
// `--last <seconds>` counts only the profile's last seconds: the measured phase, without start-up and warm-up.
import fs from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const root = path.resolve(__dirname, '..');

function bucketOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/')[0]}`;
  if (file.startsWith(root)) return `cambio:${path.relative(root, file).split('/').slice(0, 2).join('/')}`;
  return file;
}

function summarise(file: string, lastSeconds: number | undefined, top = 25) {
  const profile: Profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Self time per node from the samples (timeDeltas[i] is the time before sample i).
  const selfUs = new Map<number, number>();
  const from = lastSeconds === undefined ? -Infinity : profile.endTime - lastSeconds * 1e6;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at < from) continue;
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byBucket = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const bucket = bucketOf(url, functionName);
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + us);
    const location = url ? `${bucketOf(url, functionName)}:${path.basename(url)}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${location}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  // Inclusive time of Cambio's own functions (each function counted once per sample, however deep it recurses).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur)!.callFrame;
      if (!bucketOf(url, functionName).startsWith('cambio:')) continue;
      const file = path.relative(root, url.replace(/^file:\/\//, ''));
      const key = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const idle = byBucket.get('(idle)') ?? 0;
  const busy = totalUs - idle;
  const show = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) => `  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`,
      )
      .join('\n');
  console.log(
    `\n${path.basename(file)}: ${(totalUs / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not ` +
      `idle (percentages are of that)`,
  );
  console.log('self time by package / folder:');
  console.log(show(new Map([...byBucket].filter(([k]) => k !== '(idle)'))));
  console.log('top functions by self time:');
  console.log(show(new Map([...byFunction].filter(([k]) => !k.startsWith('(idle)')))));
  console.log("Cambio's functions by inclusive time (itself and everything it calls synchronously):");
  console.log(show(inclusive));
}

const args = process.argv.slice(2);
const lastAt = args.indexOf('--last');
const lastSeconds = lastAt >= 0 ? Number(args.splice(lastAt, 2)[1]) : undefined;
if (!args.length || (lastSeconds !== undefined && !(lastSeconds > 0))) {
  console.error('usage: tsx bench/profile-summary.ts [--last <seconds>] <file.cpuprofile> ...');
  process.exit(2);
}
for (const f of args) summarise(f, lastSeconds);
