// Highlighting marks what search matched: for every chunk a keyword search returns, every query term
// the chunk holds (as the index analyses both: PostgreSQL's English stemming) is marked in it. Word
// forms differ between query and chunk on purpose (plural, tense, case, suffixes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunk, createDataset, createOrganization, searchChunks } from '../../sdk/src/generated/sdk.gen.js';
import type { ChunkMetadata, SearchResponseBody } from '../../sdk/src/generated/types.gen.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let headers: { 'SVC-Dataset': string; 'X-API-Version': 'V2' };
const PRE = '<mark><b>';
const POST = '</b></mark>';

const corpus = [
  '<p>Glaciers in the Alps retreated quickly during the last decades.</p>',
  '<p>The glacier retreat is measured by satellites, and the measurements are published yearly.</p>',
  '<p>Refunding an order: refunds are issued to the original payment method.</p>',
  '<h3>Connecting devices</h3><p>Connections drop when a device reconnects too often.</p>',
  '<p>Organizational policies organize how organizations handle generously donated items.</p>',
  '<ul><li>Running shoes</li><li>Runners prefer lighter shoes for running longer distances.</li></ul>',
];

const QUERIES = ['glacier', 'retreating glaciers', 'refund', 'connected device', 'organization policy', 'run shoe', 'measure publishing'];

/** A text's terms as the index makes them. */
async function terms(text: string): Promise<Set<string>> {
  const { rows } = await service.services.store.db.raw<{ rows: { lexeme: string }[] }>(`select lexeme from unnest(to_tsvector('english', ?))`, [text]);
  return new Set(rows.map((r) => r.lexeme));
}

const text = (html: string) => html.replace(/<[^>]*>/g, ' ');

/** The words inside the marks of highlighted HTML. */
function marked(html: string): string[] {
  return [...html.matchAll(new RegExp(`${escapeRegExp(PRE)}(.*?)${escapeRegExp(POST)}`, 'g'))].map((m) => m[1]);
}
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

beforeAll(async () => {
  service = await startTestService();
  const orgId = (await createOrganization({ client: service.client(), body: { name: 'Highlights' } })).data!.id;
  const datasetId = (await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: 'forms' } })).data!.id;
  headers = { 'SVC-Dataset': datasetId, 'X-API-Version': 'V2' };
  const created = await createChunk({ client: service.client(), headers, body: corpus.map((chunk_html) => ({ chunk_html })) });
  expect(created.response.status).toBe(200);
});
afterAll(async () => {
  await service?.stop();
});

describe.each(['bm25', 'fulltext', 'hybrid'] as const)('highlights of %s results', (searchType) => {
  it.each(QUERIES)('mark every query term each result holds: %s', async (query) => {
    const { data, response } = await searchChunks({ client: service.client(), headers, body: { query, search_type: searchType, page_size: 10 } });
    expect(response.status).toBe(200);
    const queryTerms = await terms(query);
    const chunks = (data as SearchResponseBody).chunks;
    expect(chunks.length).toBeGreaterThan(0);
    for (const { chunk, highlights } of chunks) {
      // Full records (not slim_chunks): they carry the highlighted HTML.
      const html = (chunk as ChunkMetadata).chunk_html ?? '';
      const held = [...(await terms(text(html)))].filter((t) => queryTerms.has(t));
      const markedTerms = await terms(marked(html).join(' '));
      for (const term of held) expect(markedTerms, `"${query}": ${term} in ${html}`).toContain(term);
      if (held.length > 0) expect(highlights?.length, html).toBeGreaterThan(0);
    }
  });
});
