// Chooses the lexical engine from the configuration: Typesense when configured, else Postgres FTS.
import type { Config } from '../../config.js';
import type { Store } from '../../store/db.js';
import { PostgresLexicalIndex } from './postgres.js';
import { TypesenseLexicalIndex } from './typesense.js';
import type { LexicalIndex } from './types.js';

export type { LexicalDocument, LexicalIndex, MatchedWordsRequest } from './types.js';

export async function createLexicalIndex(config: Config['lexical'], store: Store): Promise<LexicalIndex> {
  const index = config.kind === 'typesense' ? new TypesenseLexicalIndex(config) : new PostgresLexicalIndex(store.db);
  await index.prepare();
  return index;
}
