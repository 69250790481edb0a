// The relational store: PGlite (embedded, under DATA_DIR) or PostgreSQL, both behind knex.
import knex, { type Knex } from 'knex';
import type { Logger } from 'pino';
import pg from 'pg';
import { mkdir } from 'node:fs/promises';
import type { Config } from '../config.js';
import { Activity } from './activity.js';
import { startAutoAnalyze } from './autoAnalyze.js';
import { startAutoCheckpoint } from './autoCheckpoint.js';
import { EMBEDDED_CONNECTIONS, startEmbeddedDatabase } from './embedded.js';
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

export async function openStore(config: Config['store'], logger: Pick<Logger, 'info' | 'warn'> | null = null): Promise<Store> {
  const { db, closeEngine } = config.kind === 'pglite' ? await openPglite(config.dir) : openPostgres(config.url);
  try {
    const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
    if (applied.length > 0) logger?.info(`database: ${applied.length} migration${applied.length === 1 ? '' : 's'} applied`);
    await checkVectorRoundTrip(db);
  } catch (error) {
    await db.destroy();
    await closeEngine();
    throw error;
  }
  // PostgreSQL analyzes through autovacuum and checkpoints in its checkpointer; PGlite has neither.
  const activity = config.kind === 'pglite' ? new Activity(db) : null;
  const maintenance = activity ? [startAutoAnalyze(db, activity, logger), startAutoCheckpoint(db, activity, logger)] : [];
  return {
    kind: config.kind,
    db,
    ping: async () => {
      await db.raw('select 1');
    },
    checkVectors: () => checkVectorRoundTrip(db),
    close: async () => {
      for (const task of maintenance) await task.stop();
      activity?.stop();
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
  if (!dir.startsWith('memory://')) await mkdir(dir, { recursive: true });
  const database = await startEmbeddedDatabase(dir);
  // One PGlite is one session: the worker keeps the connections' queries and transactions apart.
  const db = knex({ client: 'pg', connection: database.connection, pool: { min: 0, max: EMBEDDED_CONNECTIONS, afterCreate } });
  return { db, closeEngine: () => database.close() };
}
