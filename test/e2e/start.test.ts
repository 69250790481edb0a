// `npm start` on a fresh data directory: health answers, naming the local embedding model (the
// default that `npm install` installs), and a restart keeps the data.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectPath } from '../../scripts/contract/paths.js';

const ADMIN = 'e2e-admin-key-0123456789';
let dataDir: string;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function start(port: number): Promise<{ child: ChildProcess; startupMs: number }> {
  const began = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('server/main.ts')], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN, LOG_LEVEL: 'warn' },
    cwd: projectPath(''),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  while (Date.now() - began < 60_000) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, startupMs: Date.now() - began };
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`no healthy answer within a minute: ${stderr}`);
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  return exited;
}

afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('npm start (embedded engines)', () => {
  it('answers /api/health within a minute with the local model, stops on SIGINT, and keeps its data across a restart', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-e2e-'));
    const port = await freePort();
    const first = await start(port);
    expect(first.startupMs).toBeLessThan(60_000);
    const health = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.json());
    expect(health).toMatchObject({ store: 'pglite', embedder: 'all-MiniLM-L6-v2' });
    const created = await fetch(`http://127.0.0.1:${port}/api/organization`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survives restarts' }),
    }).then((r) => r.json());
    expect(await stop(first.child)).toBe(0);

    const second = await start(port);
    const fetched = await fetch(`http://127.0.0.1:${port}/api/organization/${created.id}`, {
      headers: { authorization: ADMIN, 'SVC-Organization': created.id },
    }).then((r) => r.json());
    expect(fetched.organization.name).toBe('Survives restarts');
    expect(await stop(second.child)).toBe(0);
  });
});
