// Summarises a V8 CPU profile (.cpuprofile, as written by `node --cpu-prof`): where this process's
// CPU went, by area (project directory or npm package) and by function, self and inclusive time.
//
//   npm run bench -- --mode full --concurrency 1 --cpu-profile     (one profile per measured phase), or
//   node --cpu-prof --cpu-prof-dir=bench/results/prof --import tsx bench/run.ts …   (the whole process)
//   npx tsx bench/profile.ts bench/results/prof/*.cpuprofile [--top 25] [--match innerText,embed] [--last 60]
// `--last S` counts only the profile's last S seconds (the load suite's measured run ends the service's profile).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, table } from './report.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const file = url.replace(/^file:\/\//, '');
  const pkg = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  if (file.startsWith('node:')) return 'node:internal';
  if (file.startsWith(ROOT)) return path.relative(ROOT, file).split('/').slice(0, 2).join('/');
  return file;
}

function label(frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\//, '').replace(ROOT + '/', '');
  return `${frame.functionName || '(anonymous)'} ${file ? `${file.replace(/^.*node_modules\//, '')}:${frame.lineNumber + 1}` : ''}`.trim();
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, match: { type: 'string', default: '' }, last: { type: 'string' } },
  });
  if (positionals.length === 0) {
    console.error('usage: npx tsx bench/profile.ts <file.cpuprofile>… [--top N] [--match name,name]');
    process.exit(2);
  }
  const top = Number(values.top);
  const matches = values.match.split(',').filter(Boolean);
  for (const file of positionals) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

    const selfByArea = new Map<string, number>();
    const selfByFn = new Map<string, number>();
    const inclusive = new Map<string, number>();
    let total = 0;
    let idle = 0;
    // Sample times in µs from the profile's start; with --last, earlier samples are left out.
    const from = values.last === undefined ? -Infinity : profile.endTime - profile.startTime - Number(values.last) * 1e6;
    let at = 0;
    profile.samples.forEach((id, i) => {
      at += profile.timeDeltas[i] ?? 0;
      if (at < from) return;
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      const node = byId.get(id)!;
      if (node.callFrame.functionName === '(idle)') {
        idle += dt;
        return;
      }
      total += dt;
      const a = area(node.callFrame);
      selfByArea.set(a, (selfByArea.get(a) ?? 0) + dt);
      const l = label(node.callFrame);
      selfByFn.set(l, (selfByFn.get(l) ?? 0) + dt);
      if (matches.length) {
        const seen = new Set<string>();
        for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
          const name = byId.get(cur)!.callFrame.functionName;
          for (const m of matches) if (name === m && !seen.has(m)) seen.add(m);
        }
        for (const m of seen) inclusive.set(m, (inclusive.get(m) ?? 0) + dt);
      }
    });
    const pct = (ms: number) => `${fmt((ms / total) * 100, 1)}%`;
    const rows = (m: Map<string, number>) =>
      [...m.entries()]
        .sort((x, y) => y[1] - x[1])
        .slice(0, top)
        .map(([k, ms]) => [k, fmt(ms), pct(ms)]);
    console.log(`${file}: ${fmt(total)} ms on CPU, ${fmt(idle)} ms idle, over ${fmt((profile.endTime - profile.startTime) / 1000)} ms\n`);
    console.log(table([['area (self time)', 'ms', 'share'], ...rows(selfByArea)]));
    console.log('');
    console.log(table([['function (self time)', 'ms', 'share'], ...rows(selfByFn)]));
    if (matches.length) {
      console.log('');
      console.log(table([['function (inclusive time)', 'ms', 'share'], ...matches.map((m) => [m, fmt(inclusive.get(m) ?? 0), pct(inclusive.get(m) ?? 0)])]));
    }
    console.log('');
  }
}

main();
