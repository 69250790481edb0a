// A user's TypeScript (an ES module), checked by tsc --strict with NodeNext resolution against the
// installed package's types. Never run.
import { ChunkSearch, ChunkSearchError, type SearchResponseBody, type TextStream, searchChunks, unwrap } from '@chunksearch/sdk';
import { fileFromPath } from '@chunksearch/sdk/node';

const chunkSearch = new ChunkSearch({ baseUrl: 'http://localhost:8090', apiKey: 'key', datasetId: 'dataset' });

export async function use(): Promise<string> {
  const results: SearchResponseBody = await chunkSearch.search({ query: 'glacier', search_type: 'hybrid', page_size: 5 });
  const first: string | null | undefined = results.chunks[0]?.chunk.tracking_id;
  const answer: TextStream = await chunkSearch.createMessageStream({ topic_id: 't', new_message_content: 'Where?' });
  let text = '';
  for await (const piece of answer) text += piece;
  const { file_metadata } = await chunkSearch.uploadFile({ file: await fileFromPath('report.pdf'), tag_set: ['reports'] });
  const raw = await unwrap(
    searchChunks({ client: chunkSearch.client, headers: { 'SVC-Dataset': 'dataset' }, body: { query: 'glacier', search_type: 'bm25' } }),
  );
  try {
    await chunkSearch.getChunkById({ chunkId: 'c' });
  } catch (error) {
    if (error instanceof ChunkSearchError) text += error.status + error.message;
  }
  // @ts-expect-error: search_type is one of the contract's methods
  await chunkSearch.search({ query: 'glacier', search_type: 'magic' });
  // @ts-expect-error: a file to upload needs its bytes
  await chunkSearch.uploadFile({ file_name: 'a.txt' });
  return `${first}${text}${file_metadata.id}${'chunks' in raw}`;
}
