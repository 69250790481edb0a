// Builds the configuration a test runs with: embedded engines in a fresh directory, or the real
// engines of the `full` project, isolated per call (own database, Typesense collection, task queue).
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../server/config.js';
import { createDatabase } from '../../scripts/services/databases.js';

export const mode = process.env.TEST_MODE === 'full' ? 'full' : 'embedded';

export async function testEnvironment(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  // Under the run's directory (temp-setup.ts), removed when the run ends.
  const dataDir = await mkdtemp(path.join(inject('testRoot'), 'service-'));
  // The hashing embedder, fast and exact to the bit; the local model has tests of its own.
  const base = {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ADMIN_API_KEY: 'test-admin-key-0123456789',
    DEFAULT_EMBEDDER: 'builtin',
    // Local sites answer at once; crawls' pacing has unit tests of its own.
    CRAWL_REQUESTS_PER_SECOND: '1000',
  };
  if (mode === 'embedded') return { ...base, ...extra };
  const engines = inject('engineEnv');
  const suffix = randomBytes(6).toString('hex');
  return {
    ...base,
    ...engines,
    DATABASE_URL: await createDatabase(engines.DATABASE_URL, `test_${suffix}`),
    TYPESENSE_COLLECTION: `test_${suffix}`,
    TEMPORAL_TASK_QUEUE: `test-${suffix}`,
    ...extra,
  };
}

export async function testConfig(extra: Record<string, string> = {}): Promise<Config> {
  return loadConfig(await testEnvironment(extra));
}
