// The lexical engine on PostgreSQL: the chunks' own stemmed terms (chunks.bm25_terms, with a GIN
// index, kept by the chunk writes) are the full-text index, and the dataset's vocabulary
// (dataset_words, kept by triggers in the same transactions) completes words being typed. No typo
// tolerance: misspelt words are corrected by `typo_options`, as on every engine. Nothing to write
// beside the chunks.
import type { Knex } from 'knex';
import { completions } from '../../search/query/typos/vocabulary.js';
import type { LexicalDocument, LexicalIndex, MatchedWordsRequest } from './types.js';

export class PostgresLexicalIndex implements LexicalIndex {
  readonly kind = 'postgres' as const;

  constructor(private readonly db: Knex) {}

  /** The tables come from the store's migrations; nothing to create here. */
  async prepare(): Promise<void> {}

  async ping(): Promise<void> {
    await this.db.raw('select 1 from dataset_words limit 1');
  }

  /** The chunk rows are the index, written in the chunk writes' own transactions. */
  async upsert(_documents: LexicalDocument[]): Promise<void> {}

  async remove(_datasetId: string, _ids: string[]): Promise<void> {}

  async removeDataset(_datasetId: string): Promise<void> {}

  /** Completions of each prefix word from the dataset's vocabulary; a whole word matches only itself. */
  async matchedWords({ datasetId, words, limit }: MatchedWordsRequest): Promise<string[][]> {
    const found = await completions(
      this.db,
      datasetId,
      words.filter((w) => w.prefix).map((w) => w.word),
      limit,
    );
    return words.map((w) => (w.prefix ? (found.get(w.word) ?? []) : []));
  }

  /** The store owns the connection. */
  async close(): Promise<void> {}
}
