// The query text over HTTP: weighted multi-queries (search and count), typo correction and
// corrected_query in both API versions, quoted and negated words and stop words in every search
// type, and the refusals of bad query input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countChunks, createChunk, createDataset, createOrganization, searchChunks } from '../../sdk/src/generated/sdk.gen.js';
import type { ChunkMetadata, SearchChunkQueryResponseBody, SearchResponseBody } from '../../sdk/src/generated/types.gen.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
let headers: { 'SVC-Dataset': string };
const v2 = () => ({ ...headers, 'X-API-Version': 'V2' as const });
const TYPES = ['semantic', 'fulltext', 'hybrid', 'bm25'] as const;

const corpus = [
  { tracking_id: 'kettle-1', chunk_html: '<p>The kettle boils water in ninety seconds and switches off by itself.</p>' },
  { tracking_id: 'kettle-2', chunk_html: '<p>Descaling the kettle every month keeps the heating element clean.</p>' },
  { tracking_id: 'kettle-3', chunk_html: '<p>A kettle with a thermostat holds the water at the temperature you choose.</p>' },
  { tracking_id: 'espresso-1', chunk_html: '<p>The espresso machine grinds beans fresh for every cup.</p>' },
  { tracking_id: 'espresso-2', chunk_html: '<p>Clean the espresso machine steam wand after frothing milk.</p>' },
  { tracking_id: 'boiler', chunk_html: '<p>The boiler heats the whole house; service the boiler once a year.</p>' },
  { tracking_id: 'descaling', chunk_html: '<p>Descaling tablets dissolve limescale in coffee machines and irons.</p>' },
];

async function search(body: Record<string, unknown>) {
  return service.request('POST', '/api/chunk/search', { headers: { authorization: ADMIN_KEY, ...v2() }, body });
}

const v2Ids = (data: unknown) => (data as SearchResponseBody).chunks.map((c) => c.chunk.tracking_id);

beforeAll(async () => {
  service = await startTestService();
  const orgId = (await createOrganization({ client: service.client(), body: { name: 'Query text' } })).data!.id;
  const datasetId = (await createDataset({ client: service.client(), headers: { 'SVC-Organization': orgId }, body: { dataset_name: 'appliances' } })).data!.id;
  headers = { 'SVC-Dataset': datasetId };
  expect((await createChunk({ client: service.client(), headers, body: corpus })).response.status).toBe(200);
});
afterAll(async () => {
  await service?.stop();
});

describe.each(TYPES)('search_type %s', (searchType) => {
  it('weighs several queries: the heavier one leads, in both versions', async () => {
    const espresso = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: {
        query: [
          { query: 'kettle', weight: 1 },
          { query: 'espresso machine', weight: 3 },
        ],
        search_type: searchType,
        page_size: 3,
      },
    });
    expect(espresso.response.status).toBe(200);
    expect(v2Ids(espresso.data)[0]).toMatch(/^espresso/);
    const kettle = await searchChunks({
      client: service.client(),
      headers,
      body: {
        query: [
          { query: 'kettle', weight: 3 },
          { query: 'espresso machine', weight: 1 },
        ],
        search_type: searchType,
        page_size: 3,
      },
    });
    expect((kettle.data as SearchChunkQueryResponseBody).score_chunks[0].metadata[0].tracking_id).toMatch(/^kettle/);
  });

  it('honours "quoted" and -negated words when asked', async () => {
    const negated = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'kettle -descaling', search_type: searchType, use_quote_negated_terms: true },
    });
    const ids = v2Ids(negated.data);
    expect(ids.length).toBeGreaterThan(0);
    for (const chunk of (negated.data as SearchResponseBody).chunks)
      expect((chunk.chunk as ChunkMetadata).chunk_html?.toLowerCase()).not.toContain('descaling');
    const quoted = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'machine "steam wand"', search_type: searchType, use_quote_negated_terms: true },
    });
    expect(v2Ids(quoted.data)).toEqual(['espresso-2']);
  });

  it('searches without stop words when asked', async () => {
    const { data } = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'the boiler of the house', search_type: searchType, remove_stop_words: true },
    });
    expect(v2Ids(data)[0]).toBe('boiler');
    await service.services.deferred.flush();
    const recorded = await service.services.store
      .db('search_queries')
      .where({ id: (data as SearchResponseBody).id })
      .first();
    expect(recorded.query).toBe('boiler house');
  });

  it('corrects a misspelt word to a word of the dataset and reports it', async () => {
    const v2Reply = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'thermostta kettle', search_type: searchType, typo_options: { correct_typos: true } },
    });
    const body = v2Reply.data as SearchResponseBody;
    expect(body.corrected_query).toBe('thermostat kettle');
    expect(body.chunks[0].chunk.tracking_id).toBe('kettle-3');
    const v1Reply = await searchChunks({
      client: service.client(),
      headers,
      body: { query: 'Espreso', search_type: searchType, typo_options: { correct_typos: true } },
    });
    expect((v1Reply.data as SearchChunkQueryResponseBody).corrected_query).toBe('Espresso');
  });
});

describe('typo options', () => {
  it('leaves corrected_query null when no word changes, and corrects nothing unless asked', async () => {
    const correct = (await search({ query: 'kettle thermostat', search_type: 'fulltext', typo_options: { correct_typos: true } })).body as SearchResponseBody;
    expect(correct.corrected_query).toBeNull();
    const off = (await search({ query: 'thermostta', search_type: 'bm25' })).body as SearchResponseBody;
    expect(off.corrected_query).toBeNull();
    expect(off.chunks).toEqual([]);
  });

  it('skips the words of disable_on_word and words outside the ranges', async () => {
    const disabled = (await search({ query: 'thermostta', search_type: 'bm25', typo_options: { correct_typos: true, disable_on_word: ['thermostta'] } })).body;
    expect(disabled.corrected_query).toBeNull();
    const outOfRange = (
      await search({
        query: 'thermostta',
        search_type: 'bm25',
        typo_options: { correct_typos: true, one_typo_word_range: { min: 5, max: 8 }, two_typo_word_range: { min: 11 } },
      })
    ).body;
    expect(outOfRange.corrected_query).toBeNull();
  });
});

describe('scoring options', () => {
  it.each(['fulltext', 'bm25'] as const)('%s: a fulltext boost puts the chunks with the boosted query terms first', async (searchType) => {
    // Boosting either word puts a chunk with that word first: the boost, not the engine's own order.
    const boiler = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'boiler espresso', search_type: searchType, scoring_options: { fulltext_boost: { phrase: 'boiler', boost_factor: 4 } } },
    });
    expect(v2Ids(boiler.data)[0]).toBe('boiler');
    const boosted = await searchChunks({
      client: service.client(),
      headers,
      body: { query: 'boiler espresso', search_type: searchType, scoring_options: { fulltext_boost: { phrase: 'espresso', boost_factor: 4 } } },
    });
    expect(boosted.response.status).toBe(200);
    expect((boosted.data as SearchChunkQueryResponseBody).score_chunks[0].metadata[0].tracking_id).toMatch(/^espresso/);
  });

  it('semantic: a semantic boost moves the query towards the phrase', async () => {
    const plain = await searchChunks({ client: service.client(), headers: v2(), body: { query: 'kettle', search_type: 'semantic' } });
    expect(v2Ids(plain.data)[0]).toMatch(/^kettle/);
    const boosted = await searchChunks({
      client: service.client(),
      headers: v2(),
      body: { query: 'kettle', search_type: 'semantic', scoring_options: { semantic_boost: { phrase: 'espresso machine steam wand', distance_factor: 0.9 } } },
    });
    expect(v2Ids(boosted.data)[0]).toBe('espresso-2');
  });

  it.each([
    [{ fulltext_boost: { phrase: 'kettle', boost_factor: -1 } }, /scoring_options\.fulltext_boost\.boost_factor/],
    [{ semantic_boost: { phrase: '', distance_factor: 0.5 } }, /scoring_options\/semantic_boost\/phrase|scoring_options\.semantic_boost\.phrase/],
  ])('refuses %j naming the field', async (scoring_options, message) => {
    const reply = await search({ query: 'kettle', search_type: 'hybrid', scoring_options });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(message);
  });
});

describe('count', () => {
  it('counts the union of weighted lexical queries, and the chunks near their combined vector', async () => {
    for (const searchType of ['fulltext', 'bm25'] as const) {
      const { data } = await countChunks({
        client: service.client(),
        headers,
        body: {
          query: [
            { query: 'kettle', weight: 1 },
            { query: 'espresso', weight: 2 },
          ],
          search_type: searchType,
        },
      });
      expect(data!.count).toBe(5);
    }
    const semantic = await countChunks({
      client: service.client(),
      headers,
      body: {
        query: [
          { query: 'kettle', weight: 1 },
          { query: 'espresso', weight: 2 },
        ],
        search_type: 'semantic',
      },
    });
    expect(semantic.data!.count).toBe(corpus.length);
  });

  it('counts with quoted and negated words honoured', async () => {
    const { data } = await countChunks({
      client: service.client(),
      headers,
      body: { query: 'kettle -descaling', search_type: 'fulltext', use_quote_negated_terms: true },
    });
    expect(data!.count).toBe(2);
    const semantic = await countChunks({
      client: service.client(),
      headers,
      body: { query: 'kettle -descaling', search_type: 'semantic', use_quote_negated_terms: true },
    });
    expect(semantic.data!.count).toBe(corpus.length - 2);
  });
});

describe('bad query input', () => {
  it.each([
    [{ query: [], search_type: 'semantic' }, /^query: give one query/],
    [
      {
        query: [
          { query: 'kettle', weight: 0 },
          { query: 'boiler', weight: -1 },
        ],
        search_type: 'fulltext',
      },
      /^query: at least one weight must be positive/,
    ],
    [{ query: [{ query: { image_url: 'https://example.com/a.png' }, weight: 1 }], search_type: 'semantic' }, /^query\[0\]\.query: only text queries/],
    [{ query: [{ query: '  ', weight: 1 }], search_type: 'bm25' }, /^query\[0\]\.query: must not be empty/],
    [{ query: '-kettle', search_type: 'bm25', use_quote_negated_terms: true }, /^query: nothing to search for/],
    [
      { query: 'kettel', search_type: 'bm25', typo_options: { correct_typos: true, one_typo_word_range: { min: 6, max: 4 } } },
      /^typo_options\.one_typo_word_range: max \(4\) is below min \(6\)/,
    ],
  ])('%j is refused naming the field', async (body, message) => {
    const reply = await search(body);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(message);
  });

  it('refuses a weight that is not a finite number', async () => {
    const reply = await service.request('POST', '/api/chunk/search', {
      headers: { authorization: ADMIN_KEY, ...headers },
      rawBody: '{"query":[{"query":"kettle","weight":1e999}],"search_type":"semantic"}',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/weight/);
  });

  it('refuses an empty list of queries to count', async () => {
    const reply = await service.request('POST', '/api/chunk/count', {
      headers: { authorization: ADMIN_KEY, ...headers },
      body: { query: [], search_type: 'fulltext' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/^query: give one query/);
  });
});
