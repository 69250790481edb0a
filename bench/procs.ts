// CPU time of the engine processes this benchmark started (full mode): every descendant of this
// process, read from /proc and grouped by command name (postgres backends add up under `postgres`).
// Linux only; elsewhere it reports nothing.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture Node supports

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** user + system CPU, in milliseconds, including children that exited and were waited for */
  cpuMs: number;
}

function readStats(): ProcStat[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const stats: ProcStat[] = [];
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // comm is in parentheses and may hold spaces; the fields after it are space-separated.
      const open = text.indexOf('(');
      const close = text.lastIndexOf(')');
      const comm = text.slice(open + 1, close);
      const rest = text.slice(close + 2).split(' ');
      // rest[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
      const ticks = Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
      stats.push({ pid: Number(pid), ppid: Number(rest[1]), comm, cpuMs: (ticks * 1000) / TICKS_PER_SECOND });
    } catch {
      // the process ended while we looked
    }
  }
  return stats;
}

/** CPU milliseconds of each kind of descendant process, by command name. */
export function descendantCpu(): Record<string, number> {
  const stats = readStats();
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const totals: Record<string, number> = {};
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      const name = child.comm.startsWith('postgres') || child.comm.startsWith('postmaster') ? 'postgres' : child.comm;
      totals[name] = (totals[name] ?? 0) + child.cpuMs;
      walk(child.pid);
    }
  };
  walk(process.pid);
  return totals;
}

/** CPU milliseconds each kind of engine process spent between two readings. */
export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, ms] of Object.entries(after)) {
    const d = ms - (before[name] ?? 0);
    if (d > 0) out[name] = d;
  }
  return out;
}

/** CPU milliseconds of this process's main thread and of its other threads (workers, V8's helpers, libuv's pool). */
export function ownThreadsCpu(): { main: number; others: number } {
  let main = 0;
  let others = 0;
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return { main, others };
  }
  for (const tid of tids) {
    try {
      const text = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(rest[11]) + Number(rest[12])) * 1000) / TICKS_PER_SECOND;
      if (Number(tid) === process.pid) main += ms;
      else others += ms;
    } catch {
      // the thread ended while we looked
    }
  }
  return { main, others };
}
