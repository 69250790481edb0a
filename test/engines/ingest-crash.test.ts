// The crash guarantee of file ingestion: the service (with its in-process runner, or its Temporal
// worker) is killed with SIGKILL in the middle of a file's ingestion, started again on the same
// database, and finishes the file with every chunk created exactly once.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { fileChunkId, fileGroupId } from '../../server/ingest/ids.js';
import { openStore } from '../../server/store/db.js';
import { exited, startChild } from '../support/child.js';
import { mode, testEnvironment } from '../support/env.js';
import { lexicalIds } from '../support/lexical.js';

const CHUNKS = 600;
const SPLITS_PER_CHUNK = 20;
const BATCH_SIZE = 60;
/** Kill once this many chunks are committed: mid-ingestion, some batches done. */
const KILL_AT = 150;

interface Line {
  started?: { datasetId: string; fileId: string };
  chunks?: number;
  ms?: number;
  status?: string;
}

describe(`file ingestion survives a crash (${mode})`, () => {
  it('a service killed mid-ingestion and started again finishes the file, every chunk exactly once', async () => {
    const env = await testEnvironment({ LOG_LEVEL: 'warn' });

    // First life: start the ingestion, kill -9 once some batches are committed.
    const first = startChild('test/engines/ingest-crash.service.ts', {
      ...env,
      CRASH_SETUP: '1',
      CRASH_SENTENCES: String(CHUNKS * SPLITS_PER_CHUNK),
      CRASH_BATCH_SIZE: String(BATCH_SIZE),
    });
    let ids: { datasetId: string; fileId: string } | undefined;
    let atKill: Line | undefined;
    for await (const raw of first.lines) {
      const line = JSON.parse(raw) as Line;
      if (line.started) ids = line.started;
      if (line.chunks !== undefined && line.chunks >= KILL_AT) {
        first.child.kill('SIGKILL');
        atKill = line;
        break;
      }
    }
    await exited(first.child);
    expect(ids, first.stderr()).toBeDefined();
    expect(atKill, first.stderr()).toBeDefined();
    expect(atKill!.status).toBe('processing');
    expect(atKill!.chunks).toBeLessThan(CHUNKS);

    // Second life: same database, no setup; it resumes the unfinished ingestion.
    const second = startChild('test/engines/ingest-crash.service.ts', { ...env, CRASH_DATASET_ID: ids!.datasetId, CRASH_FILE_ID: ids!.fileId });
    const seen: Line[] = [];
    for await (const raw of second.lines) seen.push(JSON.parse(raw));
    expect(await exited(second.child), second.stderr()).toBe(0);
    expect(seen[0].chunks!).toBeGreaterThanOrEqual(atKill!.chunks!); // what the first life committed survived
    expect(seen.at(-1)).toMatchObject({ chunks: CHUNKS, status: 'completed' });
    console.info(`killed at ${atKill!.chunks} of ${CHUNKS} chunks; the restarted service found ${seen[0].chunks} and finished in ${seen.at(-1)!.ms} ms`);

    // Every chunk exactly once, with its vector, group membership and index entry.
    const config = loadConfig(env);
    const store = await openStore(config.store);
    try {
      const { datasetId, fileId } = ids!;
      const db = store.db;
      const rows: { id: string; chunk_html: string }[] = await db('chunks').where({ dataset_id: datasetId }).select('id', 'chunk_html');
      expect(rows).toHaveLength(CHUNKS);
      expect(new Set(rows.map((r) => r.chunk_html)).size).toBe(CHUNKS);
      expect(new Set(rows.map((r) => r.id))).toEqual(new Set(Array.from({ length: CHUNKS }, (_, i) => fileChunkId(fileId, i))));
      expect(
        rows
          .map((r) => r.chunk_html)
          .sort()
          .join(' ')
          .split(/(?<=\.) /).length,
      ).toBe(CHUNKS * SPLITS_PER_CHUNK);
      const [{ n: vectors }] = await db('chunk_vectors').where({ dataset_id: datasetId }).count({ n: '*' });
      expect(Number(vectors)).toBe(CHUNKS);
      const [{ n: bookmarks }] = await db('chunk_group_bookmarks')
        .where({ group_id: fileGroupId(fileId) })
        .count({ n: '*' });
      expect(Number(bookmarks)).toBe(CHUNKS);
      expect(await lexicalIds(config.lexical, db, datasetId, 'kestrels')).toHaveLength(CHUNKS);
      const events = await db('events').where({ dataset_id: datasetId });
      expect(events.map((e) => e.event_type)).toEqual(['file_uploaded']);
      // The event counts the chunks that exist, not those the second life alone created.
      const data = typeof events[0].event_data === 'string' ? JSON.parse(events[0].event_data) : events[0].event_data;
      expect(data.chunks_created).toBe(CHUNKS);
      if (config.workflows.kind === 'in-process') {
        // The runner replayed the job's journal: started twice, finished once.
        expect(
          await db('jobs')
            .where({ id: `ingest-file-${fileId}` })
            .first(),
        ).toMatchObject({ status: 'completed', attempts: 2 });
      }
    } finally {
      await store.close();
    }
  }, 240_000);
});
