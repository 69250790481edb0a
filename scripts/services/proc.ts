// Child-process plumbing shared by the three engines: spawn with output to a log
// file, poll until ready (failing with the log's tail), stop, and make sure no
// engine outlives this Node process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export type Log = (line: string) => void;

export interface Engine {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** Resolves when the process has exited (with its exit code or signal). */
  exited: Promise<string>;
  hasExited(): boolean;
}

const running = new Set<Engine>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let exitHookInstalled = false;

/** Last resort: if Node exits while engines still run, SIGKILL them. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const e of running) killGroup(e, 'SIGKILL');
  });
}

export interface SpawnOptions {
  logFile: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
}

/**
 * Engines run under SCHED_BATCH where `chrt` (util-linux) can set it: a database backend woken by a
 * statement the service sends then no longer preempts the service's thread on its CPU, while every
 * process keeps its fair share of the CPUs. On a machine whose cores are all busy, the service's
 * thread was otherwise taken off its CPU at almost every statement (a fifth of its time under the
 * load suite), and that thread is what caps concurrent searches. chrt execs the engine: same pid.
 */
export const enginesRunAsBatch = process.platform === 'linux' && spawnSync('chrt', ['--batch', '0', 'true']).status === 0;
const BATCH_PREFIX = enginesRunAsBatch ? ['chrt', '--batch', '0'] : [];

/** <dataDir>/logs/x.log -> <dataDir>/logs/x.pid: the engine's pid while it runs. */
const pidFileFor = (logFile: string) => logFile.replace(/\.log$/, '') + '.pid';

/** An engine left running by an earlier process that died without cleaning up
 * (e.g. SIGKILLed) still holds its data dir; stop it before starting anew. Only a
 * process whose command line names `marker` (its data path) is touched. */
export async function stopLeftover(logFile: string, marker: string, signal: NodeJS.Signals, log: Log): Promise<void> {
  const pidFile = pidFileFor(logFile);
  let pid = 0;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  const alive = () => {
    try {
      return pid > 0 && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  };
  if (alive()) {
    log(`stopping a leftover engine from an earlier run (pid ${pid}, ${marker})`);
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(pid, sig);
      } catch {
        // gone meanwhile
      }
    };
    kill(signal);
    for (let i = 0; i < 100 && alive(); i++) await sleep(100);
    if (alive()) kill('SIGKILL');
    for (let i = 0; i < 50 && alive(); i++) await sleep(100);
  }
  fs.rmSync(pidFile, { force: true });
}

/** Starts an engine with stdout+stderr appended to its log file (never the terminal).
 * detached: its own process group, so a terminal Ctrl-C reaches only us and we
 * decide how each engine shuts down. */
export function spawnEngine(name: string, cmd: string, args: string[], opts: SpawnOptions): Engine {
  installExitHook();
  const fd = fs.openSync(opts.logFile, 'a');
  fs.writeSync(fd, `\n--- ${new Date().toISOString()} ${name}: ${cmd} ${args.join(' ')}\n`);
  let child: ChildProcess;
  try {
    const [command, ...commandArgs] = [...BATCH_PREFIX, cmd, ...args];
    child = spawn(command, commandArgs, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      uid: opts.uid,
      gid: opts.gid,
      stdio: ['ignore', fd, fd],
      detached: true,
    });
  } finally {
    fs.closeSync(fd);
  }
  const pidFile = pidFileFor(opts.logFile);
  if (child.pid !== undefined) fs.writeFileSync(pidFile, `${child.pid}\n`);
  let done = false;
  const exited = new Promise<string>((resolve) => {
    const finish = (how: string) => {
      if (done) return;
      done = true;
      running.delete(engine);
      fs.rmSync(pidFile, { force: true });
      resolve(how);
    };
    child.once('exit', (code, signal) => finish(signal ? `signal ${signal}` : `exit code ${code}`));
    child.once('error', (err) => finish(`spawn error: ${err.message}`));
  });
  const engine: Engine = { name, child, logFile: opts.logFile, exited, hasExited: () => done };
  running.add(engine);
  return engine;
}

/** Last lines of a log file, for error messages. */
export function logTail(file: string, lines = 40): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const len = Math.min(size, 16 * 1024);
      const buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, size - len);
      return buf.toString('utf8').split('\n').slice(-lines).join('\n');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '(no log)';
  }
}

/** Polls `ready` until it returns true. Fails fast if the engine exits, or after
 * `timeoutMs`; either way the error carries the tail of the engine's log. */
export async function waitReady(engine: Engine, ready: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    if (engine.hasExited()) {
      throw new Error(`${engine.name} exited during startup (${await engine.exited}). Log ${engine.logFile}:\n${logTail(engine.logFile)}`);
    }
    try {
      if (await ready()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${engine.name} did not answer within ${timeoutMs / 1000}s${lastError ? ` (last error: ${lastError})` : ''}. Log ${engine.logFile}:\n${logTail(engine.logFile)}`,
      );
    }
    await sleep(250);
  }
}

/** SIGKILL (or other signal) to the engine's whole process group (it was spawned
 * detached, so its pid is the group id): helpers it forked go too. */
function killGroup(engine: Engine, sig: NodeJS.Signals): void {
  const pid = engine.child.pid;
  if (pid === undefined) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // group already gone
  }
}

/** Sends `signal` to the engine's main process only (e.g. the postmaster, which then
 * shuts down its own children), waits up to `graceMs`, then SIGKILLs the group. */
export async function stopEngine(engine: Engine, signal: NodeJS.Signals, graceMs = 20_000): Promise<void> {
  if (!engine.hasExited()) {
    try {
      engine.child.kill(signal);
    } catch {
      // already gone
    }
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    if ((await Promise.race([engine.exited, timer])) === 'timeout') {
      killGroup(engine, 'SIGKILL');
      await engine.exited;
    }
  }
  // Whatever the engine left in its group (normally nothing) goes as well.
  killGroup(engine, 'SIGKILL');
}
