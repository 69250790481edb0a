// The service in a process of its own (`node --import tsx server/main.ts`), as `npm start` runs it,
// so that what is measured in it (memory, CPU, connections) is the service's alone, not the client's.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pickPorts } from '../scripts/services/ports.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ServiceProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the service on a free port with `env` and waits until /api/health answers 200. With
 * `cpuProfile`, V8 profiles the service (each thread a file) into that directory until it stops.
 */
export async function spawnService(env: Record<string, string>, log: (line: string) => void, cpuProfile?: string): Promise<ServiceProcess> {
  const { port } = await pickPorts(['port'] as const);
  const profiling = cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfile}`] : [];
  // V8's flags as `npm start` gives them (package.json).
  const child: ChildProcess = spawn(process.execPath, [...profiling, '--max-semi-space-size=64', '--import', 'tsx', path.join(ROOT, 'server/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the service exited with code ${code} while starting`))));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const healthy = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) throw new Error('the service did not answer /api/health within 120 s');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 200))]);
  }
  log(`service started as process ${child.pid} on ${url}`);
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    },
  };
}
