// Full-text ranking weighs each query word by its rarity in the dataset (idf): BM25 over the chunks'
// terms, the same on both lexical engines, which only widen what a word matches (completions of a
// word being typed; near spellings on Typesense). The fixture: 300 chunks about a harbour's services
// (common words), a few with a rarer word, one with a word no other chunk holds.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChunk, createDataset, createOrganization } from '../../sdk/src/generated/sdk.gen.js';
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { DatasetRow } from '../../server/domain/datasets.js';
import { retrieve } from '../../server/search/retrieval/index.js';
import type { RetrievalRequest } from '../../server/search/types.js';
import { mode } from '../support/env.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let dataset: DatasetRow;
const trackingOf = new Map<string, string>();

/** [tracking id, text]: the common chunks hold both common words, some of them several times. */
const CHUNKS: [string, string][] = [
  ...Array.from({ length: 296 }, (_, i): [string, string] => [
    `common-${i}`,
    i % 10 === 0
      ? `Harbour service report ${i}: the harbour service ran, and the service crew kept the harbour open.`
      : `Harbour service report ${i}: boats came and went.`,
  ]),
  ['ferry-1', 'Ferry timetable for the harbour in winter.'],
  ['ferry-2', 'A ferry crossing takes forty minutes.'],
  ['ferry-3', 'Ferry tickets are sold at the pier.'],
  // The only chunk with "zeppelin", and none of the common words.
  ['zeppelin', 'A zeppelin drifted over the town at dusk.'],
];

const search = (query: string, more: Partial<RetrievalRequest> = {}) =>
  retrieve(service.services, 'fulltext', { dataset, query, limit: 10, offset: 0, ...more });
const tracked = async (query: string, more: Partial<RetrievalRequest> = {}) => (await search(query, more)).hits.map((h) => trackingOf.get(h.id));

beforeAll(async () => {
  service = await startTestService();
  const orgId = (await createOrganization({ client: service.client(), body: { name: 'Fulltext ranking' } })).data!.id;
  const created = await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: 'harbour' } });
  dataset = (await service.services.store.db('datasets').where({ id: created.data!.id }).first()) as DatasetRow;
  const payload: T.ChunkReqPayload[] = CHUNKS.map(([tracking_id, text]) => ({ tracking_id, chunk_html: text }));
  for (let i = 0; i < payload.length; i += 120) {
    const result = await createChunk({ client: service.client(), headers: { 'SVC-Dataset': dataset.id }, body: payload.slice(i, i + 120) });
    expect(result.response.status, JSON.stringify(result.error)).toBe(200);
    for (const chunk of result.data!.chunk_metadata as T.ChunkMetadata[]) trackingOf.set(chunk.id, chunk.tracking_id!);
  }
});

afterAll(async () => {
  await service?.stop();
});

describe(`full-text ranking by idf (${mode})`, () => {
  it('puts the chunk of a rare word above chunks holding the common words, even several times', async () => {
    // Every common chunk holds "harbour" and "service", some of them three times each; one chunk
    // holds "zeppelin". With Typesense, the window of chunks matching most words is all common
    // chunks: the zeppelin chunk is a candidate as the chunk of a rare word.
    expect((await tracked('harbour service zeppelin'))[0]).toBe('zeppelin');
    expect((await tracked('zeppelin harbour service'))[0]).toBe('zeppelin');
  });

  it('ranks a rarer word above a common one, and a chunk with both above either', async () => {
    const ranked = await tracked('ferry service', { limit: 300 });
    // The three ferry chunks first ("ferry": 3 chunks; "service": 296), then the chunks holding
    // "service" three times, then the others.
    expect(ranked.slice(0, 3).sort()).toEqual(['ferry-1', 'ferry-2', 'ferry-3']);
    expect(ranked.slice(3, 8).every((t) => /^common-\d*0$/.test(t!))).toBe(true);
    const both = await tracked('ferry harbour');
    expect(both[0]).toBe('ferry-1');
  });

  it('finds the rare word of a long natural-language query', async () => {
    expect((await tracked('could you please tell me whether the harbour service ever saw a zeppelin over the town'))[0]).toBe('zeppelin');
  });

  it('scores from best to worst, with scores that a threshold cuts', async () => {
    const { hits } = await search('ferry service', { limit: 20 });
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
    const kept = await search('ferry service', { limit: 20, scoreThreshold: hits[2].score, countTotal: true });
    expect(kept.hits.map((h) => h.id)).toEqual(hits.slice(0, 3).map((h) => h.id));
    expect(kept.total).toBe(3);
  });

  it('asks the engine about at most 16 words of a long query of unknown words', async () => {
    const lexical = service.services.lexical;
    const original = lexical.matchedWords.bind(lexical);
    let most = 0;
    lexical.matchedWords = async (request) => {
      most = Math.max(most, request.words.length);
      return original(request);
    };
    try {
      const unknown = Array.from({ length: 40 }, (_, i) => `unheardof${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
      expect(await tracked(`${unknown.join(' ')} zeppelin`)).toEqual(['zeppelin']);
      expect(most).toBe(16);
    } finally {
      lexical.matchedWords = original;
    }
  });

  it('starts the BM25 search on the query words while the vocabulary is looked up', async () => {
    // The statistics' statement is sent before the vocabulary's answer comes.
    const db = service.services.store.db;
    const order: string[] = [];
    const sent = (query: { sql: string }) => {
      if (query.sql.includes('bm25_term_counts')) order.push('statistics sent');
    };
    const answered = (_response: unknown, query: { sql: string }) => {
      if (query.sql.includes('from dataset_words')) order.push('vocabulary answered');
    };
    db.on('query', sent);
    db.on('query-response', answered);
    try {
      expect((await tracked('ferry crossing'))[0]).toBe('ferry-2');
      expect(order).toEqual(['statistics sent', 'vocabulary answered']);
    } finally {
      db.off('query', sent);
      db.off('query-response', answered);
    }
  });

  it('fails a search whose phrases cannot be read while the vocabulary is still looked up', async () => {
    // The phrases' statement fails before the vocabulary answers: the search fails with it, and
    // nothing is left unhandled (vitest fails the run on an unhandled rejection).
    const db = service.services.store.db;
    const raw = db.raw.bind(db);
    const spy = vi
      .spyOn(db, 'raw')
      .mockImplementation(((sql: string, bindings: Knex.RawBinding[]) =>
        sql.includes('phraseto_tsquery') ? raw('select * from no_such_table') : raw(sql, bindings)) as typeof db.raw);
    try {
      await expect(search('"harbour service" zeppe', { prefix: true })).rejects.toThrow(/no_such_table/);
      await expect(search('"harbour service" zeppelin')).rejects.toThrow(/no_such_table/);
    } finally {
      spy.mockRestore();
    }
  });

  it('keeps the engine matching: prefixes, and Typesense typo tolerance', async () => {
    expect(await tracked('zeppe', { prefix: true })).toEqual(['zeppelin']);
    // Postgres full-text matches whole words; Typesense forgives a typo.
    expect(await tracked('zepelin')).toEqual(mode === 'embedded' ? [] : ['zeppelin']);
  });
});
