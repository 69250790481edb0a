// BM25's statistics are read by a named statement now (search/retrieval/bm25/postings.ts): the
// database keeps its plan per connection, which migration 021's function was for. The statement
// looks each query term's count up by key, where the function's join could scan every term of the
// dataset when its statistics were stale.
import type { Knex } from 'knex';
import * as m021 from './021_bm25_statistics_function.js';

export async function up(db: Knex): Promise<void> {
  await m021.down(db);
}

export async function down(db: Knex): Promise<void> {
  await m021.up(db);
}
