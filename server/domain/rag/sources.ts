// What a topic's answer rests on: the chunks a search of the dataset finds for the question (recorded
// as a search of type rag_chunks or rag_groups), what the model reads of them, and how they are sent
// with the answer: a JSON array of chunk records with their highlights and score, without `||`,
// which separates them from the completion.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Caller } from '../../auth/caller.js';
import { searchOverGroups } from '../../search/groups/search.js';
import { type Result, runSearch } from '../../search/index.js';
import type { Services } from '../../services.js';
import { chunkRecord } from '../chunks/records.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { type RagDocument, sourceText } from './prompt.js';

/** The search settings of a message request. */
export type SourceOptions = Pick<
  T.RegenerateMessageReqPayload,
  | 'search_type'
  | 'filters'
  | 'page_size'
  | 'score_threshold'
  | 'sort_options'
  | 'highlight_options'
  | 'typo_options'
  | 'use_quote_negated_terms'
  | 'remove_stop_words'
  | 'use_group_search'
  | 'user_id'
>;

export interface Sources {
  searchId: string;
  results: Result[];
}

export async function findSources(services: Services, dataset: DatasetRow, caller: Caller, options: SourceOptions, query: string): Promise<Sources> {
  const search = {
    query,
    search_type: options.search_type ?? 'hybrid',
    filters: options.filters,
    page_size: options.page_size ?? datasetConfig(dataset).N_RETRIEVALS_TO_INCLUDE,
    score_threshold: options.score_threshold,
    sort_options: options.sort_options,
    highlight_options: options.highlight_options,
    typo_options: options.typo_options,
    use_quote_negated_terms: options.use_quote_negated_terms,
    remove_stop_words: options.remove_stop_words,
    user_id: options.user_id,
  };
  const common = { prefix: false, page: 1, getTotalPages: false };
  if (options.use_group_search) {
    // The best chunk of each group found.
    const outcome = await searchOverGroups(services, dataset, caller, { ...search, group_size: 1 }, { ...common, recordAs: 'rag_groups' });
    return { searchId: outcome.id, results: outcome.groups.flatMap((group) => group.results) };
  }
  const outcome = await runSearch(services, dataset, caller, search, { ...common, recordAs: 'rag_chunks' });
  return { searchId: outcome.id, results: outcome.results };
}

/** What the model reads of each result: its text, and its `num_value` after `currency` (a price, say). */
export function sourceDocuments(results: Result[], currency: string | null | undefined): RagDocument[] {
  return results.map(({ row }) => {
    const value = row.num_value == null ? '' : `\nValue: ${currency ? `${currency} ` : ''}${row.num_value}`;
    return { text: `${sourceText(row)}${value}`, link: row.link };
  });
}

/** The results as sent with the answer. */
export function sourcesJson(results: Result[]): string {
  return JSON.stringify(results.map((r) => ({ ...chunkRecord(r.row), highlights: r.highlights, score: r.score }))).replaceAll('||', '');
}

/** The completion of a stored answer, without the chunks sent with it (either side of the first `||` that frames them). */
export function completionOf(answer: string): string {
  const first = answer.indexOf('||');
  if (first >= 0 && isJsonArray(answer.slice(0, first))) return answer.slice(first + 2);
  const last = answer.lastIndexOf('||');
  if (last >= 0 && isJsonArray(answer.slice(last + 2))) return answer.slice(0, last);
  return answer;
}

function isJsonArray(text: string): boolean {
  if (!text.startsWith('[')) return false;
  try {
    return Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}
