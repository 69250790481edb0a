// BM25_AVG_LEN unset now means the dataset's actual average chunk length (search/retrieval/bm25).
// Datasets store their configuration resolved, so those that kept the old default of 256 hold it
// as if chosen: they are given the new default. (One chosen as exactly 256 cannot be told apart.)
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw(
    `update datasets set server_configuration = jsonb_set(server_configuration, '{BM25_AVG_LEN}', 'null')
      where server_configuration->'BM25_AVG_LEN' = '256'::jsonb`,
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw(
    `update datasets set server_configuration = jsonb_set(server_configuration, '{BM25_AVG_LEN}', '256')
      where server_configuration->'BM25_AVG_LEN' = 'null'::jsonb`,
  );
}
