// Pagefind activities: the I/O steps of the pagefindIndex workflow. Each may run again safely: the
// files of a build are written under its own prefix (a second run writes the same keys), and its
// outcome is recorded once (builds.ts finishBuild).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { CHUNK_COLUMNS, type ChunkRow } from '../../server/domain/chunks/records.js';
import { emitEvent } from '../../server/domain/events.js';
import { buildStoragePrefix, findBuild, finishBuild, type BuildOutcome } from '../../server/domain/pagefind/builds.js';
import { pagefindRecord } from '../../server/domain/pagefind/records.js';
import { type PagefindRecord, writePagefindIndex } from '../../server/engines/pagefind.js';
import { heartbeat } from './heartbeat.js';
import type { ActivityDeps } from './index.js';

/** Chunks read and indexed at a time. */
const PAGE = 500;
/** No file of an index comes near this; a bound all the same. */
const MAX_FILE_BYTES = 1 << 30;

export function pagefindActivities({ store, storage }: Pick<ActivityDeps, 'store' | 'storage'>) {
  const { db } = store;
  return {
    /** Whether the build is still wanted (its row and live dataset exist); announces it when it is. */
    async beginPagefindBuild({ datasetId, buildId }: { datasetId: string; buildId: string }): Promise<boolean> {
      const build = await findBuild(db, datasetId, buildId);
      const live = build && (await db('datasets').where({ id: datasetId, deleted: 0 }).first('id'));
      if (!live) return false;
      await emitEvent(db, { datasetId, type: 'pagefind_indexing_started', data: { dataset_id: datasetId, build_id: buildId } });
      return true;
    },

    /** Indexes every chunk of the dataset and stores the index's files under the build's prefix. */
    async writePagefindFiles({ datasetId, buildId }: { datasetId: string; buildId: string }): Promise<{ records: number; files: number }> {
      const folder = await mkdtemp(path.join(os.tmpdir(), 'pagefind-'));
      try {
        const { records } = await writePagefindIndex(chunkRecords(db, datasetId), folder);
        const prefix = buildStoragePrefix(datasetId, buildId);
        const files = await filesUnder(folder);
        for (const file of files) {
          heartbeat({ storing: file });
          await storage.put(`${prefix}/${file}`, createReadStream(path.join(folder, ...file.split('/'))), { maxBytes: MAX_FILE_BYTES });
        }
        return { records, files: files.length };
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    },

    /** Records the outcome and its event; answers which builds' files are to go. */
    async finishPagefindBuild({ datasetId, buildId, outcome }: { datasetId: string; buildId: string; outcome: BuildOutcome }) {
      const finished = await finishBuild(db, datasetId, buildId, outcome);
      if (finished.found) {
        const data =
          outcome.status === 'ready'
            ? { dataset_id: datasetId, build_id: buildId, status: 'ready', total_files: outcome.files, total_records: outcome.records }
            : { dataset_id: datasetId, build_id: buildId, status: 'failed', message: outcome.reason };
        await emitEvent(db, { datasetId, type: 'pagefind_indexing_finished', data });
      }
      return finished;
    },

    /** Removes a build's files; none is no error. */
    async removePagefindFiles({ datasetId, buildId }: { datasetId: string; buildId: string }): Promise<void> {
      await storage.removeAll(buildStoragePrefix(datasetId, buildId));
    },
  };
}

/** The dataset's chunks as records, a page at a time in id order, each page with its chunks' groups. */
async function* chunkRecords(db: Knex, datasetId: string): AsyncGenerator<PagefindRecord[]> {
  let after: string | null = null;
  for (;;) {
    const page = db<ChunkRow>('chunks').where({ dataset_id: datasetId }).orderBy('id').limit(PAGE).select(CHUNK_COLUMNS);
    if (after) page.where('id', '>', after);
    const rows: ChunkRow[] = await page;
    if (rows.length === 0) return;
    const groups = await groupsOf(
      db,
      rows.map((r) => r.id),
    );
    heartbeat({ after });
    yield rows.map((row) => pagefindRecord(row, groups.get(row.id)));
    after = rows[rows.length - 1].id;
  }
}

async function groupsOf(db: Knex, chunkIds: string[]): Promise<Map<string, string[]>> {
  const rows: { chunk_id: string; group_ids: string[] }[] = await db('chunk_group_bookmarks')
    .whereIn('chunk_id', chunkIds)
    .groupBy('chunk_id')
    .select('chunk_id', db.raw('array_agg(group_id::text order by group_id) as group_ids'));
  return new Map(rows.map((r) => [r.chunk_id, r.group_ids]));
}

/** The files under `folder`, as `/`-separated paths relative to it. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}
