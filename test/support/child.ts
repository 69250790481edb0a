// A script of the project run in a child process (a service to kill mid-work, say): its stdout read
// line by line, its stderr kept for the failure message.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { projectPath } from '../../scripts/contract/paths.js';

export interface Child {
  child: ChildProcess;
  lines: AsyncIterable<string>;
  stderr: () => string;
}

export function startChild(script: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath(script)], {
    env: { ...process.env, ...env },
    cwd: projectPath(''),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return { child, lines: createInterface({ input: child.stdout! }), stderr: () => stderr };
}

/** Its exit code, once it has exited (null when a signal ended it). */
export function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
