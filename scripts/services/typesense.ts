// Typesense 0.24.1, the binary joined by install.ts. Runs as the current user.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TYPESENSE_BIN } from './install.js';
import { type Engine, spawnEngine, stopEngine, waitReady } from './proc.js';

export interface RunningTypesense {
  url: string;
  apiKey: string;
  engine: Engine;
  stop(): Promise<void>;
}

export async function startTypesense(opts: { dataDir: string; port: number; peeringPort: number }): Promise<RunningTypesense> {
  const dir = path.join(opts.dataDir, 'typesense');
  fs.mkdirSync(dir, { recursive: true });
  const logFile = path.join(opts.dataDir, 'logs', 'typesense.log');
  // The bootstrap admin key is not stored in the data dir, so a fresh one per start is fine.
  const apiKey = randomBytes(16).toString('hex');
  const url = `http://127.0.0.1:${opts.port}`;
  const engine = spawnEngine(
    'typesense',
    TYPESENSE_BIN,
    [
      `--data-dir=${dir}`,
      `--api-key=${apiKey}`,
      '--api-address=127.0.0.1',
      `--api-port=${opts.port}`,
      // Even a single node runs a raft peering listener (default 8107): give it
      // its own free port so several instances can run side by side.
      '--peering-address=127.0.0.1',
      `--peering-port=${opts.peeringPort}`,
    ],
    { logFile },
  );
  const stop = () => stopEngine(engine, 'SIGTERM');
  try {
    await waitReady(engine, async () => {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      return res.ok && ((await res.json()) as { ok?: boolean }).ok === true;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, apiKey, engine, stop };
}
