// The store seam: migrations run at every open, idempotently, and pgvector and pg_trgm answer.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enginesRunAsBatch } from '../../scripts/services/proc.js';
import type { Config } from '../../server/config.js';
import { Activity } from '../../server/store/activity.js';
import { startAutoAnalyze } from '../../server/store/autoAnalyze.js';
import { startAutoCheckpoint, walSinceCheckpoint } from '../../server/store/autoCheckpoint.js';
import { openStore, type Store } from '../../server/store/db.js';
import { mode, testConfig } from '../support/env.js';
import { longestStall } from '../support/threadFree.js';

let config: Config;
let store: Store;
beforeAll(async () => {
  config = await testConfig();
  store = await openStore(config.store);
});
afterAll(async () => {
  await store?.close();
});

describe(`store (${mode})`, () => {
  it('is the engine of the mode', () => {
    expect(store.kind).toBe(mode === 'full' ? 'postgres' : 'pglite');
  });

  // npm run services starts the engines under SCHED_BATCH where chrt can set it (scripts/services/proc.ts),
  // so that a backend woken by a statement does not preempt the service's thread.
  it.runIf(mode === 'full' && enginesRunAsBatch)('runs its backends under SCHED_BATCH', async () => {
    const { rows } = await store.db.raw<{ rows: { pid: number }[] }>('select pg_backend_pid() as pid');
    const policy = readFileSync(`/proc/${rows[0].pid}/sched`, 'utf8').match(/^policy\s*:\s*(\d+)/m)?.[1];
    expect(policy).toBe('3'); // SCHED_BATCH
  });

  it('ran every migration, and opening again runs none and keeps the data', async () => {
    const applied = await store.db('knex_migrations').orderBy('id').pluck('name');
    expect(applied).toEqual([
      '001_core',
      '002_jobs',
      '003_lexical',
      '004_users',
      '005_datasets',
      '006_chunks',
      '007_search',
      '008_bm25',
      '009_vocabulary',
      '010_recommendations',
      '011_files',
      '012_ingest',
      '013_job_leases',
      '014_bm25_postings',
      '015_bm25_average_length',
      '016_chunk_tag_index',
      '017_drop_lexical_documents',
      '018_dataset_chunk_counts',
      '019_vector_changes',
      '020_held_vector_indexes',
      '021_bm25_statistics_function',
      '022_tag_changes',
      '023_topics',
      '024_crawl_runs',
      '025_workflow_schedules',
      '026_public_page_keys',
      '027_pagefind_indexes',
      '028_experiments',
      '029_search_analytics',
      '030_analytics_events',
      '031_search_clusters',
      '032_recommendation_analytics',
      '033_analytics_report_rollups',
      '034_rag_analytics',
      '035_drop_bm25_statistics_function',
      '036_change_log_by_version',
      '037_bm25_length_from_terms',
    ]);
    await store.db('organizations').insert({ name: 'kept' });
    await store.close();
    store = await openStore(config.store);
    expect(await store.db('knex_migrations').orderBy('id').pluck('name')).toEqual(applied);
    expect(await store.db('organizations').where({ name: 'kept' }).pluck('name')).toEqual(['kept']);
  });

  it('answers pgvector distance queries and pg_trgm similarity', async () => {
    // One transaction: a temporary table lives in one connection of the pool.
    const nearest = await store.db.transaction(async (trx): Promise<{ rows: { id: number }[] }> => {
      await trx.raw('create temporary table probe (id int, embedding vector(3)) on commit drop');
      await trx.raw(`insert into probe values (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]')`);
      return trx.raw(`select id from probe order by embedding <=> '[1,0,0]' limit 2`);
    });
    expect(nearest.rows.map((r: { id: number }) => r.id)).toEqual([1, 3]);
    const similar = await store.db.raw(`select similarity('refund', 'refnud') > 0.2 as close`);
    expect(similar.rows[0].close).toBe(true);
  });

  // Embedded, PGlite runs on a thread of its own; a server process never shared the service's thread.
  it("leaves the service's thread free while a query runs", async () => {
    const { took, longest } = await longestStall(() => store.db.raw('select count(*) from generate_series(1, 5000000) g where g % 7 = 3'));
    // A query holding the thread would leave the timer silent for all of its run.
    expect(took).toBeGreaterThan(150);
    expect(longest).toBeLessThan(Math.min(100, took / 2));
  });

  // Embedded, every connection shares PGlite's one session: the worker must keep them apart.
  it("keeps a transaction's uncommitted rows from the other connections' queries", async () => {
    const name = `uncommitted ${Date.now()}`;
    let inside!: () => void;
    const written = new Promise<void>((resolve) => {
      inside = resolve;
    });
    const rolledBack = store.db
      .transaction(async (trx) => {
        await trx('organizations').insert({ name });
        inside();
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new Error('undo');
      })
      .catch((error: Error) => error.message);
    await written;
    const seen = await Promise.all(Array.from({ length: 4 }, () => store.db('organizations').where({ name }).count<{ count: string }[]>('* as count')));
    expect(seen.map(([row]) => Number(row.count))).toEqual([0, 0, 0, 0]);
    expect(await rolledBack).toBe('undo');
    expect(await store.db('organizations').where({ name }).pluck('name')).toEqual([]);
  });

  // PostgreSQL's autovacuum does this in full mode, on its own schedule.
  it.runIf(mode === 'embedded')('analyzes a table once enough of its rows changed, as autovacuum would', async () => {
    const activity = new Activity(store.db);
    const analyzer = startAutoAnalyze(store.db, activity, null);
    try {
      await analyzer.run();
      await store.db.raw("insert into organizations (name) select 'org ' || g from generate_series(1, 500) g");
      expect(await analyzer.run()).toContain('organizations');
      const [{ reltuples }] = (await store.db.raw("select reltuples from pg_class where relname = 'organizations'")).rows;
      expect(Number(reltuples)).toBeGreaterThanOrEqual(500);
      // Nothing changed since: nothing to analyze.
      expect(await analyzer.run()).not.toContain('organizations');
    } finally {
      await analyzer.stop();
      activity.stop();
    }
  });

  // In PGlite an ANALYZE holds up every other statement: the timer waits for a quiet moment.
  it.runIf(mode === 'embedded')('analyzes while statements keep coming only once a table has waited too long', async () => {
    const analyzed = async () => Number((await store.db.raw("select reltuples from pg_class where relname = 'datasets'")).rows[0].reltuples);
    await store.db.raw('analyze datasets');
    const before = await analyzed();
    const [org] = await store.db('organizations').insert({ name: 'busy' }).returning('id');
    await store.db.raw("insert into datasets (organization_id, name) select ?, 'd ' || g from generate_series(1, 300) g", [org.id]);
    const timing = { checkEveryMs: 20, busyCheckEveryMs: 50, quietMs: 300, mostDeferredMs: 1_500 };
    const busy = setInterval(() => store.db.raw('select 1').catch(() => undefined), 40);
    const activity = new Activity(store.db);
    const analyzer = startAutoAnalyze(store.db, activity, null, timing);
    const started = Date.now();
    try {
      await vi.waitFor(async () => expect(await analyzed()).toBeGreaterThan(before), { timeout: 10_000, interval: 50 });
      // Not before it had waited its longest, the database never quiet.
      expect(Date.now() - started).toBeGreaterThanOrEqual(timing.mostDeferredMs);
    } finally {
      clearInterval(busy);
      await analyzer.stop();
    }
    // Quiet: a due table is analyzed at the next look.
    await store.db.raw("insert into datasets (organization_id, name) select ?, 'e ' || g from generate_series(1, 600) g", [org.id]);
    const quiet = startAutoAnalyze(store.db, activity, null, timing);
    try {
      // Looked at less often than the quiet time, so that the looking leaves quiet moments.
      await vi.waitFor(async () => expect(await analyzed()).toBeGreaterThanOrEqual(900), { timeout: 3_000, interval: 2 * timing.quietMs });
    } finally {
      await quiet.stop();
      activity.stop();
    }
  });

  // PGlite has no checkpointer: without these checkpoints its log would keep every write until it closes.
  it.runIf(mode === 'embedded')('checkpoints once enough log is written: at a quiet moment, or at the most whatever the load', async () => {
    await store.db.raw('create table wal_filler (body text)');
    const fill = (rows: number) => store.db.raw('insert into wal_filler select repeat(md5(g::text), 30) from generate_series(1, ?) g', [rows]);
    await store.db.raw('checkpoint');
    const timing = { checkEveryMs: 20, quietMs: 300, quietBytes: 2 ** 20, mostBytes: 8 * 2 ** 20 };
    const activity = new Activity(store.db);
    const busy = setInterval(() => store.db.raw('select 1').catch(() => undefined), 40);
    const checkpointer = startAutoCheckpoint(store.db, activity, null, timing);
    try {
      // Busy: past the quiet amount, the log is kept...
      await fill(1_500);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await walSinceCheckpoint(store.db)).toBeGreaterThanOrEqual(timing.quietBytes);
      // ...and past the most, checkpointed.
      await fill(8_000);
      await vi.waitFor(async () => expect(await walSinceCheckpoint(store.db)).toBeLessThan(timing.quietBytes), { timeout: 5_000, interval: 50 });
      clearInterval(busy);
      // Quiet: past the quiet amount, checkpointed at the next look (looked at less often than the quiet time).
      await fill(1_500);
      await vi.waitFor(async () => expect(await walSinceCheckpoint(store.db)).toBeLessThan(timing.quietBytes), {
        timeout: 3_000,
        interval: 2 * timing.quietMs,
      });
    } finally {
      clearInterval(busy);
      await checkpointer.stop();
      activity.stop();
      await store.db.raw('drop table wal_filler');
    }
  });
});
