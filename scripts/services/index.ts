// Public API: install (once) and start PostgreSQL+pgvector, Typesense and the
// Temporal dev server on free loopback ports, without Docker.
import fs from 'node:fs';
import path from 'node:path';
import { installServices } from './install.js';
import { DEFAULT_DATA_DIR } from './paths.js';
import { pickPorts } from './ports.js';
import { startPostgres } from './postgres.js';
import { type Log, stopLeftover } from './proc.js';
import { startTemporal, TEMPORAL_NAMESPACE } from './temporal.js';
import { startTypesense } from './typesense.js';

export { installServices } from './install.js';
export { DEFAULT_DATA_DIR, ENV_FILE } from './paths.js';

export interface RunningServices {
  env: { DATABASE_URL: string; TYPESENSE_URL: string; TYPESENSE_API_KEY: string; TEMPORAL_ADDRESS: string; TEMPORAL_NAMESPACE: string };
  temporalUiUrl: string;
  stop(): Promise<void>;
}

export async function startServices(opts: { dataDir?: string; log?: (line: string) => void } = {}): Promise<RunningServices> {
  const log: Log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  await installServices({ log });
  const logs = path.join(dataDir, 'logs');
  fs.mkdirSync(logs, { recursive: true });

  // An earlier run that died without stopping its engines (e.g. SIGKILLed) leaves
  // them holding the data dirs and ports: stop those first. Layout: <dataDir>/
  // {postgres,typesense,temporal} data, logs/<engine>.{log,pid}, ports.json.
  await Promise.all([
    stopLeftover(path.join(logs, 'postgres.log'), path.join(dataDir, 'postgres'), 'SIGINT', log),
    stopLeftover(path.join(logs, 'typesense.log'), path.join(dataDir, 'typesense'), 'SIGTERM', log),
    stopLeftover(path.join(logs, 'temporal.log'), path.join(dataDir, 'temporal'), 'SIGTERM', log),
  ]);

  const ports = await pickPorts(
    ['postgres', 'typesense', 'typesensePeering', 'temporal', 'temporalUi', 'temporalHttp', 'temporalMetrics'],
    path.join(dataDir, 'ports.json'),
  );
  const timed = async <T>(name: string, start: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const result = await start();
    log(`${name} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    return result;
  };
  const [pgRes, tsRes, tmRes] = await Promise.allSettled([
    timed('postgres', () => startPostgres({ dataDir, port: ports.postgres, log })),
    timed('typesense', () => startTypesense({ dataDir, port: ports.typesense, peeringPort: ports.typesensePeering })),
    timed('temporal', () =>
      startTemporal({ dataDir, port: ports.temporal, uiPort: ports.temporalUi, httpPort: ports.temporalHttp, metricsPort: ports.temporalMetrics }),
    ),
  ]);

  const started = [pgRes, tsRes, tmRes].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  // Each engine stops independently; postgres gets its own (SIGINT) signal inside stop().
  const stopAll = async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
  if (pgRes.status === 'rejected' || tsRes.status === 'rejected' || tmRes.status === 'rejected') {
    await stopAll();
    const errors = [pgRes, tsRes, tmRes].flatMap((r) => (r.status === 'rejected' ? [String(r.reason instanceof Error ? r.reason.message : r.reason)] : []));
    throw new Error(`services failed to start:\n\n${errors.join('\n\n')}`);
  }

  let stopping: Promise<void> | undefined;
  return {
    env: {
      DATABASE_URL: pgRes.value.url,
      TYPESENSE_URL: tsRes.value.url,
      TYPESENSE_API_KEY: tsRes.value.apiKey,
      TEMPORAL_ADDRESS: tmRes.value.address,
      TEMPORAL_NAMESPACE,
    },
    temporalUiUrl: tmRes.value.uiUrl,
    stop: () => (stopping ??= stopAll()),
  };
}
