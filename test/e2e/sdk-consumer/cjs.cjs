// A user's CommonJS script on the installed @chunksearch/sdk, against a running service (the SDK_*
// variables say which). It asserts as it goes and prints what it found as one JSON line.
const assert = require('node:assert/strict');
const { ChunkSearch, ChunkSearchError, healthCheck, unwrap } = require('@chunksearch/sdk');
const { fileFromPath } = require('@chunksearch/sdk/node');

async function main() {
  const env = process.env;
  const chunkSearch = new ChunkSearch({ baseUrl: env.SDK_BASE_URL, apiKey: env.SDK_API_KEY, datasetId: env.SDK_DATASET_ID });
  await chunkSearch.createChunk({ chunk_html: '<p>The Reuss flows through Lake Lucerne.</p>', tracking_id: 'reuss' });
  const found = await chunkSearch.search({ query: 'Lake Lucerne', search_type: 'fulltext' });
  assert.equal(found.chunks[0].chunk.tracking_id, 'reuss');

  const refused = await new ChunkSearch({ baseUrl: env.SDK_BASE_URL, apiKey: 'not-a-key', datasetId: env.SDK_DATASET_ID })
    .search({ query: 'anything' })
    .catch((error) => error);
  assert.ok(refused instanceof ChunkSearchError);

  const upload = await chunkSearch.uploadFile({ file: await fileFromPath(env.SDK_FILE), tag_set: ['cjs'] });
  const whole = await chunkSearch.ragOnChunk({
    chunk_ids: [found.chunks[0].chunk.id],
    prev_messages: [{ role: 'user', content: 'Where?' }],
    stream_response: false,
  });
  const health = await unwrap(healthCheck({ client: chunkSearch.client }));

  console.log(
    JSON.stringify({ refusedStatus: refused.status, refusedMessage: refused.message, file: upload.file_metadata.file_name, whole, health: health.store }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
