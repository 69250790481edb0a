// A user's TypeScript (a CommonJS module), checked by tsc --strict with NodeNext resolution against
// the installed package's require types. Never run.
import { ChunkSearch, type Topic } from '@chunksearch/sdk';
import { fileFromPath } from '@chunksearch/sdk/node';

const chunkSearch = new ChunkSearch({ baseUrl: 'http://localhost:8090', apiKey: 'key', datasetId: 'dataset', retry: { retries: 5 } });

export async function use(): Promise<number> {
  const topic: Topic = await chunkSearch.createTopic({ owner_id: 'visitor', first_user_message: 'Hello' });
  const reader = await chunkSearch.createMessageReader({ topic_id: topic.id, new_message_content: 'Where?' });
  const { value } = await reader.read();
  await chunkSearch.uploadFile({ file: await fileFromPath('notes.md') });
  return value?.length ?? 0;
}
