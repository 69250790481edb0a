// Installing pinned PyPI packages into a venv under .services/, once across processes: what the
// engines (install.ts) and the contract fuzzer (fuzz.ts) share.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Log } from './proc.js';

/** Runs a command, streaming its output lines to `log`; rejects with the output's tail. */
export function runLogged(cmd: string, args: string[], log: Log): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const onData = (buf: Buffer) => {
      for (const line of buf.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        lines.push(line);
        if (lines.length > 40) lines.shift();
        log(`  ${line}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${lines.join('\n')}`))));
  });
}

/** A fresh venv at `venvDir` holding exactly `packages` (binary wheels, no dependency resolution). */
export async function installVenv(venvDir: string, packages: readonly string[], log: Log): Promise<void> {
  fs.rmSync(venvDir, { recursive: true, force: true });
  log(`creating venv ${venvDir}`);
  await runLogged('python3', ['-m', 'venv', venvDir], log);
  log(`pip install ${packages.join(' ')}`);
  const pip = ['-m', 'pip', 'install', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off'];
  await runLogged(path.join(venvDir, 'bin', 'python'), [...pip, ...packages], log);
}

/**
 * The venv at `venvDir` holding exactly `packages`: installed first, once across processes, when
 * missing or of other pins (a marker in it records what was installed).
 */
export async function ensureVenv(venvDir: string, packages: readonly string[], what: string, log: Log): Promise<void> {
  const marker = path.join(venvDir, 'installed.json');
  const installed = () => {
    try {
      return JSON.stringify(JSON.parse(fs.readFileSync(marker, 'utf8')).packages) === JSON.stringify(packages);
    } catch {
      return false;
    }
  };
  if (installed()) return;
  fs.mkdirSync(path.dirname(venvDir), { recursive: true });
  await withInstallLock(`${venvDir}.lock`, what, log, async () => {
    if (installed()) return;
    const started = Date.now();
    await installVenv(venvDir, packages, log);
    fs.writeFileSync(marker, JSON.stringify({ packages, installedAt: new Date().toISOString() }, null, 2) + '\n');
    log(`${what} installed in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in the lock; 0 while its owner has not written it yet, or has just released it. */
function lockOwner(lockDir: string): number {
  try {
    return Number(fs.readFileSync(path.join(lockDir, 'pid'), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

/**
 * Runs `fn` as the only installer of `what` across processes (parallel test files, say): mkdir is
 * atomic, and the lock holds its owner's pid so that a crashed owner's lock is taken over.
 */
export async function withInstallLock<T>(lockDir: string, what: string, log: Log, fn: () => Promise<T>): Promise<T> {
  for (let waited = false; ; waited = true) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = lockOwner(lockDir);
      if (owner && !pidAlive(owner)) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!waited) log(`another process is installing ${what}; waiting`);
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
