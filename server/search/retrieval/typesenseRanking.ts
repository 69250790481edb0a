// Full-text search on Typesense, ranked with idf. Typesense finds the matches with its own semantics
// (every query word, dropping words from the right until enough match; typos; the last word as a
// prefix) and ranks them by `text_match`, which counts matched words and their proximity but not how
// rare each word is. So:
//
// 1. Counts, at the same time as Typesense's search for the window: how many chunks the dataset has
//    (datasetSize.ts) and how many hold each query word: the dataset's vocabulary (dataset_words)
//    for a plain word, Typesense for the others (a prefix, a word with digits or punctuation inside).
// 2. Candidates: Typesense's window of best matches, and every chunk holding one of the query's
//    rarer words (in at most RARE_WORD_DOCUMENTS chunks, rarest first, up to RARE_CANDIDATES in all,
//    listed by a second multi-search): a rare word's chunks are the likeliest to rank first, and a
//    long query's window, made of the chunks holding its first few words, would otherwise miss them.
// 3. Ranking: BM25 (termWeights.ts) over each candidate's stored terms (chunks.bm25_terms, stemmed
//    as Postgres full-text stems), read in one statement that also says which candidates pass the
//    filter and the query's conditions; idf from the counts above, over the whole dataset (a stem
//    takes the largest count of the query words giving it, and at least the number of candidates
//    holding it). A prefix word counts once in each chunk it begins a word of. A fulltext boost
//    multiplies its terms' weights (search/query/boost.ts). Ties, such as candidates Typesense
//    matched through a misspelt word the stored terms do not hold, keep Typesense's order, then go
//    by id.
//
// The result is every candidate that passes the filter, the conditions and the threshold, best
// first, so `total` counts the candidates (see fulltext.ts).
import type { Knex } from 'knex';
import type { Services } from '../../services.js';
import { applyChunkFilter, hasConditions } from '../filters.js';
import { applyTermConditions, hasTermConditions } from '../query/conditions.js';
import { surfaceWords } from '../query/words.js';
import type { Hit, RetrievalRequest } from '../types.js';
import { datasetSizes } from './datasetSize.js';
import { bm25, lexemeQuery, termFrequencies, type Bm25Term } from './termWeights.js';

/** A word held by at most this many chunks has all of them taken as candidates. */
export const RARE_WORD_DOCUMENTS = 100;
/** The most candidates the rare words add to Typesense's window. */
export const RARE_CANDIDATES = 500;
/** A chunk id; Typesense may hold documents that are not chunks (e.g. written by hand). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The words of a query that count towards ranking, as Typesense reads words: split on white space,
 * with a letter or digit (Typesense reads others as `*`), without -negated words or phrases.
 */
export function queryWords(query: string): string[] {
  const seen = new Set<string>();
  for (const [token, minus, phrase] of query.matchAll(/(-?)"([^"]*)"?|\S+/g)) {
    if (minus || (phrase === undefined && /^-./.test(token))) continue;
    for (const word of (phrase ?? token).split(/\s+/)) if (/[\p{L}\p{N}]/u.test(word)) seen.add(word.replace(/"/g, '').toLowerCase());
  }
  return [...seen];
}

interface Candidate {
  id: string;
  /** Typesense's text_match for window hits, 0 for chunks found through a rare word only. */
  engine: number;
}

/** A query word, how many of the dataset's documents hold it, and its stems. */
interface WordCount {
  word: string;
  prefix: boolean;
  found: number;
  stems: string[];
}

/**
 * The dataset's size and the query words' counts and stems. A word that is one word of the
 * dataset's vocabulary (letters only; dataset_words, kept by the chunk writes) is counted there, by
 * its primary key; the other words (a prefix, digits, several words joined by punctuation) by
 * Typesense, at the same time.
 */
async function countWords(services: Services, request: RetrievalRequest, lastIsPrefix: boolean): Promise<{ documents: number; words: WordCount[] }> {
  const lexical = services.lexical;
  if (!lexical.words) throw new Error(`the ${lexical.kind} lexical index does not count words`);
  const words = queryWords(request.query).map((word, i, all) => {
    const prefix = lastIsPrefix && i === all.length - 1;
    const surface = surfaceWords(word);
    return { word, prefix, vocabulary: !prefix && surface.length === 1 ? surface[0] : null };
  });
  const asked = words.filter((w) => w.vocabulary == null);
  const db = services.store.db;
  const datasetId = request.dataset.id;
  const [documents, engine, { rows }] = await Promise.all([
    datasetSizes.get(`chunks/${datasetId}`, async () => {
      // Marked `idf`: counted whether or not the matches are.
      const { rows } = await db.raw<{ rows: { count: number }[] }>('select /* idf */ count(*)::int as count from chunks where dataset_id = ?', [datasetId]);
      return rows[0].count;
    }),
    lexical.words({ datasetId, words: asked.map((w) => ({ word: w.word, prefix: w.prefix, limit: 0 })) }),
    db.raw<{ rows: { stems: string[]; chunks: number }[] }>(
      `select tsvector_to_array(to_tsvector('english', w.word)) as stems, coalesce(d.chunks, 0) as chunks
       from unnest(?::text[], ?::text[]) with ordinality as w(word, vocabulary, i)
       left join dataset_words d on d.dataset_id = ? and d.word = w.vocabulary
       order by w.i`,
      // '' is no word of the vocabulary: the words Typesense counts.
      [words.map((w) => w.word), words.map((w) => w.vocabulary ?? ''), datasetId],
    ),
  ]);
  const fromEngine = new Map(asked.map((w, i) => [w.word, engine.words[i].found]));
  return {
    documents,
    words: words.map((w, i) => ({
      word: w.word,
      prefix: w.prefix,
      found: w.vocabulary == null ? fromEngine.get(w.word)! : rows[i].chunks,
      stems: rows[i].stems,
    })),
  };
}

/** The chunks of the rarest words (see the header), rarest first. */
async function rareWordChunks(services: Services, request: RetrievalRequest, words: WordCount[]): Promise<string[]> {
  const rare: WordCount[] = [];
  let listed = 0;
  for (const word of words.filter((w) => w.found > 0 && w.found <= RARE_WORD_DOCUMENTS).sort((a, b) => a.found - b.found)) {
    if (listed + word.found > RARE_CANDIDATES) break;
    rare.push(word);
    listed += word.found;
  }
  if (rare.length === 0) return [];
  const { words: lists } = await services.lexical.words!({
    datasetId: request.dataset.id,
    words: rare.map((w) => ({ word: w.word, prefix: w.prefix, limit: w.found })),
  });
  return lists.flatMap((l) => l.ids);
}

/**
 * The candidates of a search, ranked: the window of `window` hits and, for a query of any of its
 * words (`anyWord`), the rare words' chunks, that pass the filter, the conditions and the threshold,
 * best first.
 */
export async function rankedTypesenseCandidates(
  services: Services,
  request: RetrievalRequest,
  { window, lastIsPrefix, anyWord }: { window: number; lastIsPrefix: boolean; anyWord: boolean },
): Promise<Hit[]> {
  // Typesense's search, and at the same time the word counts then the rare words' chunks. Rare
  // words add chunks only to a plain query: "quoted phrases" and -words ask for strict matches.
  const [found, { counts, rare }] = await Promise.all([
    services.lexical.search({ datasetId: request.dataset.id, query: request.query, limit: window }),
    countWords(services, request, lastIsPrefix).then(async (counts) => ({
      counts,
      rare: anyWord ? await rareWordChunks(services, request, counts.words) : [],
    })),
  ]);
  const candidates = new Map<string, Candidate>();
  for (const hit of found) if (UUID.test(hit.id) && !candidates.has(hit.id)) candidates.set(hit.id, { id: hit.id, engine: hit.score });
  for (const id of rare) if (UUID.test(id) && !candidates.has(id)) candidates.set(id, { id, engine: 0 });
  return rank(services.store.db, request, [...candidates.values()], counts);
}

/**
 * The full-text scores of the listed chunks (those the query does not match score 0), as a search
 * would rank them: for rescoring another search's results.
 */
export async function typesenseScores(services: Services, request: RetrievalRequest, ids: string[]): Promise<Hit[]> {
  const counts = await countWords(services, request, false);
  return rank(
    services.store.db,
    request,
    ids.filter((id) => UUID.test(id)).map((id) => ({ id, engine: 0 })),
    counts,
  );
}

async function rank(db: Knex, request: RetrievalRequest, candidates: Candidate[], counts: { documents: number; words: WordCount[] }): Promise<Hit[]> {
  if (candidates.length === 0) return [];
  // The stems to score, each with the largest count of the words giving it.
  const terms = new Map<string, Bm25Term>();
  counts.words.forEach((w) => {
    for (const lexeme of w.stems) {
      const key = `${w.prefix ? '*' : ''}${lexeme}`;
      const term = terms.get(key) ?? { lexeme, prefix: w.prefix, found: 0 };
      terms.set(key, { ...term, found: Math.max(term.found, w.found) });
    }
  });
  const whole = [...terms.values()].filter((t) => !t.prefix);
  const prefixes = [...terms.values()].filter((t) => t.prefix);
  const rows = await occurrences(
    db,
    request,
    candidates,
    whole.map((t) => t.lexeme),
    prefixes.map((t) => lexemeQuery(t)),
  );
  const engine = new Map(candidates.map((c) => [c.id, c.engine]));
  const scored = bm25(
    rows.map((r) => ({
      id: r.id,
      length: r.len,
      tf: termFrequencies(r.terms),
      prefixes: new Set(prefixes.filter((_, i) => r.prefixed?.[i]).map((t) => t.lexeme)),
    })),
    [...whole, ...prefixes],
    counts.documents,
    request.termBoost,
  );
  const kept = new Set(rows.filter((r) => r.kept).map((r) => r.id));
  const threshold = request.scoreThreshold;
  return scored
    .filter((h) => kept.has(h.id) && (threshold == null || h.score >= threshold))
    .sort((a, b) => b.score - a.score || engine.get(b.id)! - engine.get(a.id)! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

interface Occurrences {
  id: string;
  len: number;
  /** Whether the chunk passes the filter and the conditions. */
  kept: boolean;
  /** The chunk's terms cut down to the whole stems, as a tsvector's text. */
  terms: string;
  /** Per prefix stem, whether the chunk holds a word it begins (null without prefix stems). */
  prefixed: boolean[] | null;
}

/**
 * What BM25 needs of each candidate that is a chunk of the dataset: its length, and its terms cut
 * down to the stems (setweight marks them A, ts_filter keeps those; read as text, a third faster
 * than unnesting them into arrays). Whether it passes the filter is a column: the statistics are
 * the same filtered or not.
 */
async function occurrences(db: Knex, request: RetrievalRequest, candidates: Candidate[], lexemes: string[], prefixes: string[]): Promise<Occurrences[]> {
  const ids = candidates.map((c) => c.id);
  // `= any(ids)` lets the planner look each candidate up by id.
  const query = db('chunks')
    .where('chunks.dataset_id', request.dataset.id)
    .whereRaw('chunks.id = any(?::uuid[])', [ids])
    .select(
      'chunks.id',
      db.raw('coalesce(chunks.bm25_length, 0) as len'),
      db.raw(`ts_filter(setweight(coalesce(chunks.bm25_terms, ''::tsvector), 'A', ?::text[]), '{a}')::text as terms`, [lexemes]),
    );
  if (prefixes.length)
    query.select(
      db.raw('(select array_agg(coalesce(chunks.bm25_terms @@ p, false) order by i) from unnest(?::tsquery[]) with ordinality as x(p, i)) as prefixed', [
        prefixes,
      ]),
    );
  if (hasFilter(request)) {
    const kept = applyTermConditions(
      applyChunkFilter(
        db('chunks').select('chunks.id').where('chunks.dataset_id', request.dataset.id).whereRaw('chunks.id = any(?::uuid[])', [ids]),
        request.filter,
        'chunks',
        'filters',
      ),
      request.conditions,
    );
    query.select(db.raw('chunks.id in (?) as kept', [kept]));
  } else query.select(db.raw('true as kept'));
  const rows: Occurrences[] = await query;
  return rows.map((r) => ({ ...r, len: Number(r.len) }));
}

function hasFilter(request: RetrievalRequest): boolean {
  return hasConditions(request.filter) || hasTermConditions(request.conditions);
}
