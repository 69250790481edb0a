// The relational store: PGlite (embedded, under DATA_DIR) or PostgreSQL, both behind knex.
import knex, { type Knex } from 'knex';
import type { Logger } from 'pino';
import pg from 'pg';
import { mkdir } from 'node:fs/promises';
import type { Config } from '../config.js';
import { startAutoAnalyze } from './autoAnalyze.js';
import { migrationSource } from './migrations/index.js';
import { checkVectorRoundTrip, hnswSessionSql } from './vectors.js';

// A zone-less `timestamp` is a wall-clock value (chunk time stamps): keep its text instead of letting
// the driver read it in the process's local time zone.
const TIMESTAMP_WITHOUT_ZONE = 1114;
pg.types.setTypeParser(TIMESTAMP_WITHOUT_ZONE, (text: string) => text);

export interface Store {
  kind: 'pglite' | 'postgres';
  db: Knex;
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  /** Throws VectorEngineError when pgvector cannot write and search vectors. */
  checkVectors(): Promise<void>;
  close(): Promise<void>;
}

export async function openStore(config: Config['store'], logger: Pick<Logger, 'warn'> | null = null): Promise<Store> {
  const { db, closeEngine } = config.kind === 'pglite' ? await openPglite(config.dir) : openPostgres(config.url);
  try {
    await db.migrate.latest({ migrationSource });
    await checkVectorRoundTrip(db);
  } catch (error) {
    await db.destroy();
    await closeEngine();
    throw error;
  }
  // PostgreSQL analyzes through autovacuum; PGlite has none.
  const autoAnalyze = config.kind === 'pglite' ? startAutoAnalyze(db, logger) : null;
  return {
    kind: config.kind,
    db,
    ping: async () => {
      await db.raw('select 1');
    },
    checkVectors: () => checkVectorRoundTrip(db),
    close: async () => {
      await autoAnalyze?.stop();
      await db.destroy();
      await closeEngine();
    },
  };
}

/** Every new connection gets the vector search settings (store/vectors.ts) before its first use. */
function afterCreate(connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void): void {
  connection.query(hnswSessionSql()).then(
    () => done(null, connection),
    (error: Error) => done(error, connection),
  );
}

function openPostgres(url: string) {
  const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 10, afterCreate } });
  return { db, closeEngine: async () => {} };
}

async function openPglite(dir: string) {
  // Loaded lazily so full mode never pays for the WebAssembly engine.
  const [{ PGlite }, { vector }, { pg_trgm }, { createPgConfig }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-pgvector'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('@electric-sql/pglite/node-postgres'),
  ]);
  if (!dir.startsWith('memory://')) await mkdir(dir, { recursive: true });
  const pglite = await PGlite.create(dir, { extensions: { vector, pg_trgm } });
  // One PGlite is one session: a pool of one connection keeps transactions from interleaving.
  const db = knex({ client: 'pg', connection: () => createPgConfig(pglite) as never, pool: { min: 0, max: 1, afterCreate } });
  return { db, closeEngine: () => pglite.close() };
}
