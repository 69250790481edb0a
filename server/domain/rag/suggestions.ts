// Suggested queries for a dataset (get_suggested_queries): the dataset's model reads a few of its
// chunks (those a search for `query` finds, else a sample) and writes queries a user could search
// them with, one per line; the lines become the suggestions.
import { randomUUID } from 'node:crypto';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';
import { passingQuery } from '../../search/filters/passing.js';
import { retrieve } from '../../search/retrieval/index.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { asBadRequest, datasetModel } from './endpoint.js';
import { type SourceChunk, sourceText } from './prompt.js';

/** Chunks the model reads. */
const CONTEXT_CHUNKS = 10;
/** Of each chunk, at most this much text. */
const CONTEXT_CHARACTERS = 1000;
const DEFAULT_SUGGESTIONS = 10;

const KINDS: Record<T.SuggestType, string> = {
  keyword: 'short keyword searches (two to four words)',
  question: 'questions',
  semantic: 'descriptive searches that are not questions',
};

export async function suggestedQueries(
  services: Services,
  dataset: DatasetRow,
  body: T.SuggestedQueriesReqPayload,
  signal: AbortSignal,
): Promise<T.SuggestedQueriesResponse> {
  const count = body.suggestions_to_create ?? DEFAULT_SUGGESTIONS;
  if (count === 0) return { queries: [] };
  const { chat, model } = datasetModel(services, dataset);
  const chunks = await contextChunks(services, dataset, body);
  const documents = chunks.map((c, i) => `Document ${i + 1}: ${sourceText(c).slice(0, CONTEXT_CHARACTERS)}`).join('\n\n');
  const kind = KINDS[body.suggestion_type ?? 'keyword'];
  const aim = body.is_followup && body.query ? `follow-up ${kind} to the search "${body.query}"` : kind;
  const instructions = [
    `Write ${count} ${aim} that someone could make to find the documents below${body.is_ecommerce ? ', as a shopper looking for products' : ''}.`,
    body.context ? `They search with this in mind: ${body.context}` : '',
    'Write one per line, with nothing else: no numbering, no quotes, no explanation.',
  ]
    .filter(Boolean)
    .join(' ');
  const { content } = await chat
    .complete({ model, messages: [{ role: 'user', content: `${instructions}\n\n${documents || '(the collection is empty)'}` }], temperature: 0.7 }, signal)
    .catch(asBadRequest);
  const queries = suggestionLines(content).slice(0, count);
  if (queries.length === 0) throw badRequest(`the model of ${dataset.name} answered no suggestions`);
  return { queries };
}

/** The answer's lines as suggestions: list marks, numbering and quotes removed, repeats dropped. */
export function suggestionLines(answer: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const line of answer.split('\n')) {
    const query = line
      .trim()
      .replace(/^(?:[-*•]|\d+[.)])\s*/u, '')
      .replace(/^["'“”‘’]+|["'“”‘’]+$/gu, '')
      .trim();
    if (query && !seen.has(query.toLowerCase())) {
      seen.add(query.toLowerCase());
      out.push(query);
    }
  }
  return out;
}

/** What a search for the query finds, else a sample of the chunks passing the filter. */
async function contextChunks(services: Services, dataset: DatasetRow, body: T.SuggestedQueriesReqPayload): Promise<SourceChunk[]> {
  const db = services.store.db;
  const request = { dataset, query: body.query ?? '', filter: body.filters ?? null, limit: CONTEXT_CHUNKS, offset: 0 };
  if (body.query?.trim()) {
    const { hits } = await retrieve(services, body.search_type ?? 'hybrid', request);
    const rows: (SourceChunk & { id: string })[] = await db('chunks')
      .whereIn(
        'id',
        hits.map((h) => h.id),
      )
      .select('id', 'chunk_html', 'link');
    const byId = new Map(rows.map((r) => [r.id, r]));
    return hits.flatMap((h) => byId.get(h.id) ?? []);
  }
  // A sample from a random point of the id order (read by its index), wrapping to the start.
  const from = randomUUID();
  const sample = (after: boolean) =>
    passingQuery(db, request)
      .where('chunks.id', after ? '>=' : '<', from)
      .orderBy('chunks.id')
      .limit(CONTEXT_CHUNKS)
      .select('chunks.chunk_html', 'chunks.link');
  const first: SourceChunk[] = await sample(true);
  return first.length < CONTEXT_CHUNKS ? [...first, ...(await sample(false)).slice(0, CONTEXT_CHUNKS - first.length)] : first;
}
