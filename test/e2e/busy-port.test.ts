// A second instance on a port already in use: `npm start` exits with a message naming the port
// before it opens the database (its DATA_DIR stays empty), and startService() rejects with it.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { ListenError, startService } from '../../server/main.js';
import { projectPath } from '../../scripts/contract/paths.js';

let holder: net.Server;
let port: number;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-busy-port-'));
  holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  port = (holder.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => holder?.close(resolve));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('starting on a port already in use', () => {
  it('npm start exits with code 1 and a message naming the port, without opening the database', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', projectPath('server/main.ts')], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      cwd: projectPath(''),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(`cannot listen on port ${port} on 127.0.0.1: it is already in use (another instance?); set PORT to a free port`);
    expect(stdout).not.toMatch(/listening/);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('startService() rejects with the same message', async () => {
    const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const failure = await startService(config).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ListenError);
    expect((failure as ListenError).code).toBe('EADDRINUSE');
    expect((failure as Error).message).toMatch(new RegExp(`^cannot listen on port ${port} on 127\\.0\\.0\\.1: it is already in use`));
    expect(await readdir(dataDir)).toEqual([]);
  });
});
