// The CISI test collection (library and information science abstracts, 1,460 documents, 112 queries,
// relevance judgements for 76 of them) as JSONL in a directory of its own, and the judging of a
// ranking: nDCG@k with gain = rel and a log2 discount, as the collection's README defines it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Where the collection is unless `--cisi` says otherwise. */
export const DEFAULT_CISI_DIR = '/work/shared/bench/cisi';

/** nDCG@10 of a plain BM25 on this collection, from the collection's README (computed outside the service). */
export const REFERENCE_NDCG_AT_10 = 0.274;

export interface CisiDocument {
  id: string;
  title: string;
  text: string;
}

export interface CisiQuery {
  id: string;
  text: string;
}

export interface Cisi {
  dir: string;
  documents: CisiDocument[];
  queries: CisiQuery[];
  /** query id → (doc id → rel), for the queries with judgements. */
  qrels: Map<string, Map<string, number>>;
  /** The queries with judgements, in the file's order: the ones that are scored. */
  judged: CisiQuery[];
  /** sha256 of each file, so that result files name the exact data they were computed on. */
  sha256: Record<string, string>;
}

async function jsonl<T>(file: string): Promise<{ rows: T[]; sha256: string }> {
  const bytes = await readFile(file);
  const rows = bytes
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as T;
      } catch (error) {
        throw new Error(`${file}:${i + 1}: not JSON`, { cause: error });
      }
    });
  return { rows, sha256: createHash('sha256').update(bytes).digest('hex') };
}

export async function loadCisi(dir: string): Promise<Cisi> {
  const docs = await jsonl<CisiDocument>(path.join(dir, 'docs.jsonl'));
  const queries = await jsonl<CisiQuery>(path.join(dir, 'queries.jsonl'));
  const qrels = await jsonl<{ query: string; doc: string; rel: number }>(path.join(dir, 'qrels.jsonl'));

  const documents = docs.rows.map((d) => ({ id: String(d.id), title: d.title ?? '', text: d.text ?? '' }));
  const docIds = new Set(documents.map((d) => d.id));
  if (docIds.size !== documents.length) throw new Error(`${dir}/docs.jsonl: document ids are not unique`);
  const queryList = queries.rows.map((q) => ({ id: String(q.id), text: q.text }));
  const queryIds = new Set(queryList.map((q) => q.id));

  const judgements = new Map<string, Map<string, number>>();
  for (const r of qrels.rows) {
    const query = String(r.query);
    const doc = String(r.doc);
    if (!queryIds.has(query)) throw new Error(`${dir}/qrels.jsonl: unknown query ${query}`);
    if (!docIds.has(doc)) throw new Error(`${dir}/qrels.jsonl: unknown document ${doc}`);
    if (!Number.isFinite(r.rel)) throw new Error(`${dir}/qrels.jsonl: rel of ${query}/${doc} is not a number`);
    let forQuery = judgements.get(query);
    if (!forQuery) judgements.set(query, (forQuery = new Map()));
    forQuery.set(doc, r.rel);
  }
  return {
    dir,
    documents,
    queries: queryList,
    qrels: judgements,
    judged: queryList.filter((q) => judgements.has(q.id)),
    sha256: { 'docs.jsonl': docs.sha256, 'queries.jsonl': queries.sha256, 'qrels.jsonl': qrels.sha256 },
  };
}

/**
 * The chunk content of a document: its title, a blank line and its text, as plain text. The service
 * indexes and embeds plain text as it is (no HTML conversion, which would, for one, upper-case an
 * `<h1>`), so both engines see exactly the words the reference BM25 saw: title and text.
 */
export function documentContent(doc: CisiDocument): string {
  return `${doc.title}\n\n${doc.text}`.trim();
}

/**
 * nDCG@k: DCG = Σ rel_i / log2(i + 1) over the first k results (i from 1; unjudged documents have
 * rel 0), divided by the DCG of the judged documents sorted by rel. An empty ranking scores 0.
 */
export function ndcgAt(k: number, ranking: string[], judgements: Map<string, number>): number {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranking.length); i++) dcg += (judgements.get(ranking[i]) ?? 0) / Math.log2(i + 2);
  const ideal = [...judgements.values()].filter((rel) => rel > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i] / Math.log2(i + 2);
  return idcg > 0 ? dcg / idcg : 0;
}

/** Whitespace-separated words: how long a query is, as a reader would count. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
