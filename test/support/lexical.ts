// What the lexical engine holds for a dataset, read behind the seam's back: the ids of the documents
// holding a word. On PostgreSQL the chunks' own terms are the full-text index; on Typesense, its
// collection is searched directly, so a test sees what was written there, not what the service infers.
import type { Knex } from 'knex';
import { Client } from 'typesense';
import type { Config } from '../../server/config.js';

export async function lexicalIds(config: Config['lexical'], db: Knex, datasetId: string, word: string): Promise<string[]> {
  if (config.kind === 'postgres')
    return (await db('chunks').where('dataset_id', datasetId).whereRaw("bm25_terms @@ plainto_tsquery('english', ?)", [word]).pluck('id')).sort();
  const client = new Client({ nodes: [{ url: config.url }], apiKey: config.apiKey, logLevel: 'error' });
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const result = await client
      .collections<{ id: string }>(config.collection)
      .documents()
      .search({ q: word, query_by: 'text', filter_by: `dataset_id:=\`${datasetId}\``, include_fields: 'id', num_typos: 0, prefix: false, per_page: 250, page });
    ids.push(...(result.hits ?? []).map((h) => h.document.id));
    if ((result.hits ?? []).length < 250) return ids.sort();
  }
}
