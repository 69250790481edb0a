// A dataset's static Pagefind index: asking for a build (durable work, workflows/pagefind.ts) and
// where the last one built is served (http/pagefindFiles.ts).
import { workflowIds } from '../../../workflows/registry.js';
import { badRequest, notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { serviceBaseUrl } from '../files/links.js';
import { currentBuilds, deleteBuild, insertBuild } from './builds.js';

/** The path a build's files are served under (no key needed: the build's random id is what opens it). */
export function pagefindPath(datasetId: string, buildId: string): string {
  return `/pagefind/${datasetId}/${buildId}`;
}

function assertEnabled(dataset: DatasetRow): void {
  if (!datasetConfig(dataset).PAGEFIND_ENABLED) {
    throw badRequest(`dataset ${dataset.id} does not have Pagefind enabled: set server_configuration.PAGEFIND_ENABLED to true`);
  }
}

/** Starts a build of the dataset's index; the workflow does the rest. */
export async function requestPagefindIndex(services: Services, dataset: DatasetRow): Promise<void> {
  assertEnabled(dataset);
  const build = await insertBuild(services.store.db, dataset.id);
  try {
    await services.workflows.run('pagefindIndex', {
      workflowId: workflowIds.pagefindIndex(build.id),
      input: { datasetId: dataset.id, buildId: build.id },
    });
  } catch (error) {
    await deleteBuild(services.store.db, build.id);
    throw error;
  }
}

/** The URL of the folder of the dataset's index; 404 saying why when there is none yet. */
export async function pagefindIndexUrl(services: Services, dataset: DatasetRow): Promise<{ url: string }> {
  assertEnabled(dataset);
  const { ready, newest } = await currentBuilds(services.store.db, dataset.id);
  if (ready) return { url: serviceBaseUrl(services) + pagefindPath(dataset.id, ready.id) };
  if (newest?.status === 'building') {
    throw notFound(`the Pagefind index of dataset ${dataset.id} is being built (build ${newest.id}); ask again once it is done`);
  }
  if (newest?.status === 'failed') {
    throw notFound(`dataset ${dataset.id} has no Pagefind index: its last build failed: ${newest.failure_reason}`);
  }
  throw notFound(`dataset ${dataset.id} has no Pagefind index yet: PUT /api/dataset/pagefind builds one`);
}
