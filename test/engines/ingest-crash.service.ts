// The service process of the ingestion crash test (run by ingest-crash.test.ts, never by vitest
// itself): starts the real service from the environment; with CRASH_SETUP it first creates a
// dataset and a text file (CRASH_SENTENCES sentences) and starts the file's ingestion. Then it reports, one JSON line every
// few milliseconds, how many chunks the dataset has and the file's status, until the file is done.
// The test kills it (SIGKILL) in the middle, and starts it again without CRASH_SETUP.
import { Readable } from 'node:stream';
import { loadConfig } from '../../server/config.js';
import { startService } from '../../server/main.js';
import { workflowIds } from '../../workflows/registry.js';

const began = Date.now();
const report = (line: object) => process.stdout.write(`${JSON.stringify({ ...line, ms: Date.now() - began })}\n`);

const service = await startService(loadConfig(process.env));
const { store, storage, workflows } = service.services;
const db = store.db;

let datasetId = process.env.CRASH_DATASET_ID ?? '';
let fileId = process.env.CRASH_FILE_ID ?? '';
if (process.env.CRASH_SETUP) {
  const sentences = Number(process.env.CRASH_SENTENCES);
  const text = Array.from({ length: sentences }, (_, i) => `Crash sentence ${i} about kestrels.`).join(' ');
  const [org] = await db('organizations').insert({ name: 'crash test' }).returning('id');
  const [dataset] = await db('datasets').insert({ organization_id: org.id, name: 'crash' }).returning('id');
  datasetId = dataset.id;
  const [file] = await db('files')
    .insert({
      dataset_id: datasetId,
      file_name: 'crash.txt',
      size: Buffer.byteLength(text),
      status: 'pending',
      ingest_options: JSON.stringify({ rebalance_chunks: false }),
    })
    .returning('id');
  fileId = file.id;
  const key = `${datasetId}/${fileId}`;
  await storage.put(key, Readable.from([Buffer.from(text)]), { maxBytes: 1 << 30 });
  await db('files').where({ id: fileId }).update({ storage_key: key });
  await workflows.run('ingestFile', {
    workflowId: workflowIds.ingestFile(fileId),
    input: { datasetId, fileId, batchSize: Number(process.env.CRASH_BATCH_SIZE) },
  });
  report({ started: { datasetId, fileId } });
}

for (;;) {
  const [{ n }] = await db('chunks').where({ dataset_id: datasetId }).count({ n: '*' });
  const file = await db('files').where({ id: fileId }).first('status');
  report({ chunks: Number(n), status: file.status });
  if (file.status === 'completed' || file.status === 'failed') break;
  await new Promise((resolve) => setTimeout(resolve, 15));
}
await service.stop();
process.exit(0);
