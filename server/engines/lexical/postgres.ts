// Lexical index on Postgres full-text search (table lexical_documents, migration 003).
import type { Knex } from 'knex';
import type { LexicalDocument, LexicalHit, LexicalIndex, LexicalSearch } from './types.js';

export class PostgresLexicalIndex implements LexicalIndex {
  readonly kind = 'postgres' as const;

  constructor(private readonly db: Knex) {}

  /** The table comes from the store's migrations; nothing to create here. */
  async prepare(): Promise<void> {}

  async ping(): Promise<void> {
    await this.db.raw('select 1 from lexical_documents limit 1');
  }

  async upsert(documents: LexicalDocument[]): Promise<void> {
    // ON CONFLICT DO UPDATE rejects a key twice in one statement: the last version wins.
    const latest = new Map<string, LexicalDocument>();
    for (const d of documents) latest.set(`${d.datasetId}/${d.id}`, d);
    if (latest.size === 0) return;
    const rows = [...latest.values()];
    // unnest keeps any batch to one statement with three parameters (no 65535-parameter limit).
    // Postgres text cannot hold NUL, which may occur in extracted text.
    await this.db.raw(
      `insert into lexical_documents (dataset_id, id, body)
       select * from unnest(?::uuid[], ?::uuid[], ?::text[])
       on conflict (dataset_id, id) do update set body = excluded.body`,
      [rows.map((r) => r.datasetId), rows.map((r) => r.id), rows.map((r) => r.text.replaceAll('\u0000', ''))],
    );
  }

  async remove(datasetId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.raw('delete from lexical_documents where dataset_id = ? and id = any(?::uuid[])', [datasetId, ids]);
  }

  async removeDataset(datasetId: string): Promise<void> {
    await this.db('lexical_documents').where({ dataset_id: datasetId }).delete();
  }

  async search({ datasetId, query, limit }: LexicalSearch): Promise<LexicalHit[]> {
    if (!query.trim() || limit <= 0) return [];
    // websearch_to_tsquery accepts any user input ("quoted phrases", or, -exclusions) without
    // syntax errors. ts_rank_cd (cover density) rewards query words close together; the
    // normalization 1 divides by 1 + log(length) so a long chunk does not win by size alone.
    const { rows } = await this.db.raw<{ rows: { id: string; score: number }[] }>(
      `select id, ts_rank_cd(tsv, q, 1) as score
       from lexical_documents, websearch_to_tsquery('english', ?) as q
       where dataset_id = ? and tsv @@ q
       order by score desc, id
       limit ?`,
      [query, datasetId, limit],
    );
    return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
  }

  /** The store owns the connection. */
  async close(): Promise<void> {}
}
