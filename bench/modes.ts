// The engines a benchmark runs on. `embedded`: PGlite with Postgres full-text search in a temporary
// DATA_DIR. `full`: real PostgreSQL + pgvector, Typesense and Temporal started by `startServices`
// in a temporary directory. Every `freshEnv()` is isolated: its own data directory, or its own
// database, Typesense collection and task queue.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServices, type RunningServices } from '../scripts/services/index.js';
import { createDatabase } from '../scripts/services/databases.js';

export type Mode = 'embedded' | 'full';
export const MODES: Mode[] = ['embedded', 'full'];

export const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

/** DEFAULT_EMBEDDER of a service start: the embedder of the suite's datasets. */
export type BenchEmbedder = 'local' | 'builtin';

export interface ModeEnvironment {
  mode: Mode;
  /** The environment of one service start, on engines no other start has used, its datasets embedded by `embedder`. */
  freshEnv(embedder?: BenchEmbedder): Promise<Record<string, string>>;
  /** Seconds the engines took to start (full mode). */
  enginesStartSeconds: number | null;
  close(): Promise<void>;
}

export async function openMode(mode: Mode, log: (line: string) => void): Promise<ModeEnvironment> {
  const root = await mkdtemp(path.join(os.tmpdir(), `svc-bench-${mode}-`));
  const base = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ADMIN_API_KEY: ADMIN_KEY };
  let n = 0;
  if (mode === 'embedded') {
    return {
      mode,
      enginesStartSeconds: null,
      freshEnv: async (embedder = 'local') => {
        const dataDir = path.join(root, `data-${++n}`);
        await mkdir(dataDir, { recursive: true });
        return { ...base, DEFAULT_EMBEDDER: embedder, DATA_DIR: dataDir };
      },
      close: () => rm(root, { recursive: true, force: true }),
    };
  }

  const t0 = performance.now();
  log('starting PostgreSQL + pgvector, Typesense and Temporal…');
  // A directory of its own directly under the temporary directory: startServices lets the
  // unprivileged PostgreSQL user through it, not through directories above it.
  const enginesDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-engines-'));
  const removeAll = () => Promise.all([rm(root, { recursive: true, force: true }), rm(enginesDir, { recursive: true, force: true })]);
  let services: RunningServices;
  try {
    services = await startServices({ dataDir: enginesDir, log: (line) => log(`  ${line}`) });
  } catch (error) {
    await removeAll();
    throw error;
  }
  const enginesStartSeconds = (performance.now() - t0) / 1000;
  return {
    mode,
    enginesStartSeconds,
    freshEnv: async (embedder = 'local') => {
      const suffix = `${randomBytes(4).toString('hex')}_${++n}`;
      const dataDir = path.join(root, `data-${n}`);
      await mkdir(dataDir, { recursive: true });
      return {
        ...base,
        ...services.env,
        DEFAULT_EMBEDDER: embedder,
        DATA_DIR: dataDir,
        DATABASE_URL: await createDatabase(services.env.DATABASE_URL, `bench_${suffix}`),
        TYPESENSE_COLLECTION: `bench_${suffix}`,
        TEMPORAL_TASK_QUEUE: `bench-${suffix}`,
      };
    },
    close: async () => {
      await services.stop();
      await removeAll();
    },
  };
}
