// A user's ES module script on the installed @chunksearch/sdk, against a running service (the
// SDK_* variables say which): chunks, search, groups, uploads in each form, a topic answered as a
// stream, RAG over chunks, typed errors, retries, and a generated function. It asserts as it goes
// and prints what it found as one JSON line.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { ChunkSearch, ChunkSearchError, TextStream, getMe, unwrap } from '@chunksearch/sdk';
import { fileFromPath } from '@chunksearch/sdk/node';

const env = process.env;

// The transport: every request is noted, and the ones listed in `refuseOnce` are answered 503
// the first time, as a busy proxy would, without reaching the service.
const sent = [];
const refuseOnce = new Set(['POST /api/chunk', 'POST /api/chunk/search', 'GET /api/chunk_group/tracking_id/rivers']);
async function busyAtFirst(input, init) {
  const request = new Request(input, init);
  const key = `${request.method} ${new URL(request.url).pathname}`;
  sent.push(key);
  if (refuseOnce.delete(key)) return new Response('{"message":"busy"}', { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '0' } });
  return fetch(request);
}

const chunkSearch = new ChunkSearch({
  baseUrl: env.SDK_BASE_URL,
  apiKey: env.SDK_API_KEY,
  organizationId: env.SDK_ORGANIZATION_ID,
  fetch: busyAtFirst,
  retry: { minDelayMs: 5 },
});
const count = (key) => sent.filter((k) => k === key).length;

const dataset = await chunkSearch.createDataset({ dataset_name: 'Swiss rivers' });
chunkSearch.datasetId = dataset.id;
assert.equal((await chunkSearch.getDatasetById(dataset.id)).name, 'Swiss rivers');

// A POST that writes is not sent again: its 503 reaches the caller as a typed error.
const busy = await chunkSearch.createChunk({ chunk_html: '<p>never stored</p>' }).catch((error) => error);
assert.ok(busy instanceof ChunkSearchError);
assert.equal(busy.status, 503);
assert.equal(busy.message, 'busy');
assert.equal(count('POST /api/chunk'), 1);

await chunkSearch.createChunk([
  { chunk_html: '<p>The Rhône rises at the Rhône glacier and flows into Lake Geneva.</p>', tracking_id: 'rhone', tag_set: ['river'] },
  { chunk_html: '<p>The Aare is the longest river that both rises and ends in Switzerland.</p>', tracking_id: 'aare', tag_set: ['river'] },
]);
const aare = await chunkSearch.getChunkByTrackingId({ trackingId: 'aare' });
assert.deepEqual(aare.tag_set, ['river']);

// A search is a POST that only reads: retried after the 503.
const found = await chunkSearch.search({ query: 'longest river Switzerland', search_type: 'fulltext' });
assert.equal(count('POST /api/chunk/search'), 2);
assert.equal(found.chunks[0].chunk.tracking_id, 'aare');

const missing = await chunkSearch.getChunkById({ chunkId: '00000000-0000-4000-8000-000000000000' }).catch((error) => error);
assert.ok(missing instanceof ChunkSearchError);
assert.equal(missing.status, 404);
assert.ok(missing.message.length > 0);

const group = await chunkSearch.createChunkGroup({ name: 'Rivers', tracking_id: 'rivers' });
await chunkSearch.addChunkToGroup({ group_id: group.id, chunk_tracking_id: 'rhone' });
await chunkSearch.addChunkToGroupByTrackingId({ tracking_id: 'rivers', chunk_tracking_id: 'aare' });
// A GET: retried after the 503.
const rivers = await chunkSearch.getGroupByTrackingId({ trackingId: 'rivers' });
assert.equal(count('GET /api/chunk_group/tracking_id/rivers'), 2);
assert.equal(rivers.id, group.id);
const inGroup = await chunkSearch.getChunksInGroup({ groupId: group.id, page: 1 });
assert.equal(inGroup.chunks.length, 2);

// Uploads: multipart from a Blob, a file on disk, a Node.js stream and a web stream; base64 in JSON.
const text = 'The Inn flows from the Engadin to the Danube.\n';
const uploads = [
  await chunkSearch.uploadFile({ file: new Blob([text]), file_name: 'inn.txt', tag_set: ['blob'], metadata: { source: 'blob' } }),
  await chunkSearch.uploadFile({ file: await fileFromPath(env.SDK_FILE), description: 'from disk' }),
  await chunkSearch.uploadFile({ file: Readable.from([Buffer.from('The Ticino '), Buffer.from('flows south.\n')]), file_name: 'ticino.md' }),
  await chunkSearch.uploadFile({ file: new Blob([text]).stream(), file_name: 'web-stream.txt' }),
  await chunkSearch.uploadFile({ base64_file: Buffer.from(text).toString('base64'), file_name: 'base64.txt' }),
];
const files = uploads.map(({ file_metadata }) => ({ name: file_metadata.file_name, size: file_metadata.size, tags: file_metadata.tag_set }));
const onDisk = await chunkSearch.getFile({ fileId: uploads[1].file_metadata.id });

// A topic, its answer read as it is written.
const topic = await chunkSearch.createTopic({ owner_id: 'visitor-1', first_user_message: 'Which river is the longest?' });
const answer = await chunkSearch.createMessageStream({ topic_id: topic.id, new_message_content: 'Which river is the longest?', search_type: 'fulltext' });
assert.ok(answer instanceof TextStream);
let pieces = 0;
let streamed = '';
for await (const piece of answer) {
  pieces++;
  streamed += piece;
}
const messages = await chunkSearch.getAllMessagesForTopic({ messagesTopicId: topic.id });

const rag = await chunkSearch.ragOnChunkStream({ chunk_ids: [aare.id], prev_messages: [{ role: 'user', content: 'How long is the Aare?' }] });
const ragText = await rag.text();

// Every operation is a generated function too, run with this client's settings.
const me = await unwrap(getMe({ client: chunkSearch.client }));

console.log(
  JSON.stringify({
    files,
    onDiskSize: onDisk.size,
    streamed,
    pieces,
    queryId: answer.queryId,
    messageRoles: messages.map((m) => m.role),
    ragText,
    ragQueryId: rag.queryId,
    me: me.email,
  }),
);
