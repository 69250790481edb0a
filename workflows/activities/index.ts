// All activities of all workflows, created over the live dependencies so that the Temporal
// worker (running inside the service) and the in-process runner call the very same functions.
import type { CrawlSettings } from '../../server/config.js';
import type { LexicalIndex } from '../../server/engines/lexical/types.js';
import type { OutboundSettings } from '../../server/engines/outbound.js';
import type { FileStorage } from '../../server/engines/storage/types.js';
import type { Store } from '../../server/store/db.js';
import { crawlActivities } from './crawl.js';
import { datasetActivities } from './datasets.js';
import { ingestActivities } from './ingest.js';
import { pagefindActivities } from './pagefind.js';
import { searchClusterActivities } from './searchClusters.js';

export interface ActivityDeps {
  store: Store;
  lexical: LexicalIndex;
  /** The bytes of uploaded files. */
  storage: FileStorage;
  /** The service's configuration.outbound (embedding endpoints, webhooks); none reachable beyond the public internet when absent. */
  outbound?: OutboundSettings;
  /** The service's configuration.crawl (the pace of requests to a site); no pace of its own when absent. */
  crawl?: CrawlSettings;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...datasetActivities(deps),
    ...ingestActivities(deps),
    ...crawlActivities(deps),
    ...pagefindActivities(deps),
    ...searchClusterActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
