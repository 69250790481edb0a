// A runner that dies holding a job (run by job-leases.test.ts, never by vitest itself): opens the
// store from the environment, seeds a dataset, starts its purge on an in-process runner with a long
// lease, and prints `{"datasetId", "workflowId"}` once the job's first activity is under way; that
// activity never ends. The test kills this process with SIGKILL.
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../server/config.js';
import { createLexicalIndex } from '../../server/engines/lexical/index.js';
import { openFileStorage } from '../../server/engines/storage/index.js';
import { createInProcessEngine } from '../../server/engines/workflows/inprocess.js';
import { openStore } from '../../server/store/db.js';
import { workflowIds } from '../../workflows/registry.js';

const config = loadConfig(process.env);
const store = await openStore(config.store);
const storage = await openFileStorage(config);
const index = await createLexicalIndex(config.lexical, store);
const [org] = await store.db('organizations').insert({ name: 'dies holding a job' }).returning('id');
const [dataset] = await store.db('datasets').insert({ organization_id: org.id, name: 'orphaned' }).returning('id');
await store.db('chunks').insert(Array.from({ length: 4 }, (_, i) => ({ id: randomUUID(), dataset_id: dataset.id, chunk_html: `orphan ${i}` })));
const workflowId = workflowIds.purgeDataset(dataset.id);

const lexical = {
  ...index,
  removeDataset: async () => {
    process.stdout.write(`${JSON.stringify({ datasetId: dataset.id, workflowId })}\n`);
    await new Promise(() => {}); // holds the job until the kill
  },
};
const runner = createInProcessEngine({ store, lexical, storage }, { leaseMs: Number(process.env.LEASE_MS) });
await runner.start();
await runner.run('purgeDataset', { workflowId, input: { datasetId: dataset.id } });
