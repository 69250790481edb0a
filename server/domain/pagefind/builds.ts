// The builds of a dataset's Pagefind index (table pagefind_indexes): all the SQL of Pagefind indexes.
// A build is `building`, then `ready`, `failed`, or `replaced` (a newer build is ready, and its
// files are removed). The dataset's index is its newest ready build, newest by when it was asked for.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { datasetStoragePrefix } from '../files/upload.js';

export type BuildStatus = 'building' | 'ready' | 'failed' | 'replaced';

export interface BuildRow {
  id: string;
  dataset_id: string;
  status: BuildStatus;
  records: number | null;
  files: number | null;
  failure_reason: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** Where a build's files are kept in the file storage: under the dataset's prefix, so its purge removes them. */
export function buildStoragePrefix(datasetId: string, buildId: string): string {
  return `${datasetStoragePrefix(datasetId)}/pagefind/${buildId}`;
}

export async function insertBuild(db: Knex, datasetId: string): Promise<BuildRow> {
  const [row] = await db<BuildRow>('pagefind_indexes').insert({ id: randomUUID(), dataset_id: datasetId, status: 'building' }).returning('*');
  return row;
}

export async function deleteBuild(db: Knex, buildId: string): Promise<void> {
  await db('pagefind_indexes').where({ id: buildId }).del();
}

export async function findBuild(db: Knex, datasetId: string, buildId: string): Promise<BuildRow | undefined> {
  return db<BuildRow>('pagefind_indexes').where({ id: buildId, dataset_id: datasetId }).first();
}

/** The dataset's index, and the newest build asked for (which may be newer than the index). */
export async function currentBuilds(db: Knex, datasetId: string): Promise<{ ready?: BuildRow; newest?: BuildRow }> {
  const newestFirst = () =>
    db<BuildRow>('pagefind_indexes')
      .where({ dataset_id: datasetId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
  const [ready, newest] = await Promise.all([newestFirst().where({ status: 'ready' }).first(), newestFirst().first()]);
  return { ready, newest };
}

export type BuildOutcome = { status: 'ready'; records: number; files: number } | { status: 'failed'; reason: string };

/**
 * Records how a build ended. A ready build becomes the dataset's index unless a build asked for
 * after it is ready already (then it is replaced itself); the ready builds it supersedes are marked
 * replaced. Returns the builds whose files are to go. Running it again changes nothing more.
 */
export async function finishBuild(db: Knex, datasetId: string, buildId: string, outcome: BuildOutcome): Promise<{ found: boolean; remove: string[] }> {
  return db.transaction(async (trx) => {
    // Builds of a dataset finish one at a time, so two cannot both stay ready.
    const dataset = await trx('datasets').where({ id: datasetId }).forUpdate().first('id');
    const build = dataset && (await trx<BuildRow>('pagefind_indexes').where({ id: buildId, dataset_id: datasetId }).first());
    // Gone with its dataset: whatever it wrote goes too.
    if (!build) return { found: false, remove: [buildId] };
    if (build.status !== 'building') return { found: true, remove: build.status === 'replaced' || build.status === 'failed' ? [buildId] : [] };
    const finished = { finished_at: trx.fn.now() };
    if (outcome.status === 'failed') {
      await trx('pagefind_indexes')
        .where({ id: buildId })
        .update({ ...finished, status: 'failed', failure_reason: outcome.reason });
      return { found: true, remove: [buildId] };
    }
    const ready = await trx<BuildRow>('pagefind_indexes').where({ dataset_id: datasetId, status: 'ready' }).select('id', 'created_at');
    const isNewer = (row: Pick<BuildRow, 'id' | 'created_at'>) =>
      row.created_at.getTime() > build.created_at.getTime() || (row.created_at.getTime() === build.created_at.getTime() && row.id > build.id);
    const newer = ready.some(isNewer);
    const older = ready.filter((row) => !isNewer(row)).map((row) => row.id);
    const counts = { records: outcome.records, files: outcome.files };
    await trx('pagefind_indexes')
      .where({ id: buildId })
      .update({ ...finished, ...counts, status: newer ? 'replaced' : 'ready' });
    if (newer) return { found: true, remove: [buildId] };
    if (older.length) await trx('pagefind_indexes').whereIn('id', older).update({ status: 'replaced' });
    return { found: true, remove: older };
  });
}
