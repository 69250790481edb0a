// Figures out: small statistics helpers, a resident-memory sampler, a plain-text table, and the JSON
// result file bench/results/<suite>-<mode>.json (git-ignored).
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

/** Samples this process's resident set size; `peak()` is the highest seen since `start`/`reset`. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private max = 0;

  constructor(private readonly intervalMs = 25) {}

  start(): this {
    this.reset();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  reset(): void {
    this.max = 0;
    this.sample();
  }

  sample(): void {
    this.max = Math.max(this.max, process.memoryUsage.rss());
  }

  /** Peak in MiB since the last reset. */
  peak(): number {
    this.sample();
    return this.max / 2 ** 20;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** Wall time and this process's CPU time (user + system) over a stretch of work. */
export function stopwatch(): () => { wallMs: number; cpuMs: number } {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    return { wallMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
  };
}

export function fmt(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A plain table: the first row is the header; numbers-looking cells are right-aligned. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const numeric = (s: string) => /^[-+]?[\d,.]+( ?[%x×]|\s?ms|\s?MiB|\/s)?$|^–$/.test(s);
  const line = (r: string[]) =>
    r
      .map((c, i) => (numeric(c) && i > 0 ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/** What was measured on: enough to compare result files from different machines and commits. */
export function machine(): Record<string, unknown> {
  let commit: string | null = null;
  let dirty: boolean | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
  } catch {
    // not a git checkout
  }
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? null,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    commit,
    dirty,
  };
}

export async function writeResult(suite: string, mode: string, result: Record<string, unknown>): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${suite}-${mode}.json`);
  const body = { suite, mode, finished_at: new Date().toISOString(), machine: machine(), ...result };
  await writeFile(file, JSON.stringify(body, null, 2) + '\n');
  return file;
}
