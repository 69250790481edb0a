// The pagefindIndex flow (workflow `pagefind-<build id>`): one build of a dataset's static Pagefind
// index. Steps, each an activity: begin (the build still wanted? a `pagefind_indexing_started`
// event) -> build (every chunk a record, the index's files written to the file storage; a long step
// that heartbeats, and run again from the start after a crash) -> finish (the build becomes the
// dataset's index, or is marked failed; a `pagefind_indexing_finished` event) -> remove the files
// of the builds it replaced (or its own, when it failed or a newer one won). A failed build fails
// the workflow at the very end, so the Temporal UI and the job rows show it.
// Deterministic code only: it runs in Temporal's workflow sandbox.
import type { ActivityOptions } from '@temporalio/workflow';
import type { Activities } from './activities/index.js';
import type { BuildOutcome } from '../server/domain/pagefind/builds.js';
import { checkUuid, isCancellation, reasonOf, retry } from './common.js';
import type { FlowContext } from './flows.js';

export const pagefindActivityOptions = {
  beginPagefindBuild: { startToCloseTimeout: '1m', retry },
  writePagefindFiles: { startToCloseTimeout: '2h', heartbeatTimeout: '1m', retry },
  finishPagefindBuild: { startToCloseTimeout: '1m', retry },
  removePagefindFiles: { startToCloseTimeout: '10m', retry },
} satisfies Record<string, ActivityOptions>;

export interface PagefindIndexInput {
  datasetId: string;
  /** The build's row (pagefind_indexes), made when the build was asked for. */
  buildId: string;
}

export type PagefindIndexResult = { status: 'ready' | 'replaced'; records: number; files: number } | { status: 'gone' };

export async function pagefindIndexFlow(ctx: FlowContext<Activities>, input: PagefindIndexInput): Promise<PagefindIndexResult> {
  const { datasetId, buildId } = input;
  checkUuid('pagefindIndex', 'datasetId', datasetId);
  checkUuid('pagefindIndex', 'buildId', buildId);
  const { beginPagefindBuild, writePagefindFiles, finishPagefindBuild, removePagefindFiles } = ctx.activities;
  if (!(await beginPagefindBuild({ datasetId, buildId }))) return { status: 'gone' };
  let outcome: BuildOutcome;
  try {
    outcome = { status: 'ready', ...(await writePagefindFiles({ datasetId, buildId })) };
  } catch (err) {
    if (isCancellation(err)) throw err;
    outcome = { status: 'failed', reason: reasonOf(err) };
  }
  const { found, remove } = await finishPagefindBuild({ datasetId, buildId, outcome });
  for (const id of remove) await removePagefindFiles({ datasetId, buildId: id });
  if (!found) return { status: 'gone' };
  if (outcome.status === 'failed') throw new PagefindBuildError(outcome.reason);
  return { status: remove.includes(buildId) ? 'replaced' : 'ready', records: outcome.records, files: outcome.files };
}

/** The index could not be built; the message is the reason its event and the build's row carry. */
export class PagefindBuildError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PagefindBuildError';
  }
}
