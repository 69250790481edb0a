// The service process of the crawl crash test (run by crawl-crash.test.ts, never by vitest itself):
// starts the real service from the environment; with CRASH_SETUP it first creates a dataset and a
// crawl of CRASH_SITE_URL (the test's site). Then it reports, one JSON line every few milliseconds,
// how many chunks the dataset has and the crawl's status, until the crawl has ended. The test kills
// it (SIGKILL) in the middle, and starts it again without CRASH_SETUP.
import { loadConfig } from '../../server/config.js';
import { createCrawl } from '../../server/domain/crawls.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { startService } from '../../server/main.js';

const began = Date.now();
const report = (line: object) => process.stdout.write(`${JSON.stringify({ ...line, ms: Date.now() - began })}\n`);

const service = await startService(loadConfig(process.env));
const db = service.services.store.db;

let datasetId = process.env.CRASH_DATASET_ID ?? '';
let crawlId = process.env.CRASH_CRAWL_ID ?? '';
if (process.env.CRASH_SETUP) {
  const [org] = await db('organizations').insert({ name: 'crawl crash test' }).returning('id');
  const [dataset] = await db('datasets').insert({ organization_id: org.id, name: 'crawl crash' }).returning('*');
  datasetId = dataset.id;
  const crawl = await createCrawl(service.services, dataset as DatasetRow, { crawl_options: { site_url: process.env.CRASH_SITE_URL!, ignore_sitemap: true } });
  crawlId = crawl.id;
  report({ started: { datasetId, crawlId } });
}

for (;;) {
  const [{ n }] = await db('chunks').where({ dataset_id: datasetId }).count({ n: '*' });
  const crawl = await db('crawl_requests').where({ id: crawlId }).first('status');
  report({ chunks: Number(n), status: crawl.status });
  if (crawl.status === 'Completed' || crawl.status === 'Failed') break;
  await new Promise((resolve) => setTimeout(resolve, 15));
}
await service.stop();
process.exit(0);
