// All activities of all workflows, created over the live dependencies so that the Temporal
// worker (running inside the service) and the in-process runner call the very same functions.
import type { LexicalIndex } from '../../server/engines/lexical/types.js';
import type { Store } from '../../server/store/db.js';
import { datasetActivities } from './datasets.js';

export interface ActivityDeps {
  store: Store;
  lexical: LexicalIndex;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...datasetActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
