// ChunkFilter → SQL: one fixture dataset, a table of filters with the chunks each must select (the
// same in both modes, PGlite and PostgreSQL), and a table of filters refused with 400. The cases live
// in test/support/filter-cases.ts; test/engines/filter-search.test.ts runs them through every search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { HttpError } from '../../server/errors.js';
import { applyChunkFilter, validateChunkFilter } from '../../server/search/filters.js';
import { openStore, type Store } from '../../server/store/db.js';
import { mode, testConfig } from '../support/env.js';
import { CASES, CHUNKS, field, fixtureColumns, ids, LONDON, LYON, PARIS, type Filter } from '../support/filter-cases.js';

let store: Store;
let datasetId: string;

beforeAll(async () => {
  store = await openStore((await testConfig()).store);
  const db = store.db;
  const [organization] = await db('organizations').insert({ name: 'filters' }).returning('id');
  [{ id: datasetId }] = await db('datasets').insert({ organization_id: organization.id, name: 'filters' }).returning('id');
  for (const group of ['g-news', 'g-travel', 'g-food']) {
    [{ id: ids[group] }] = await db('chunk_groups').insert({ dataset_id: datasetId, tracking_id: group, name: group }).returning('id');
  }
  // A group of the same tracking id in another dataset: membership is resolved in the chunk's dataset.
  const [{ id: otherDataset }] = await db('datasets').insert({ organization_id: organization.id, name: 'other' }).returning('id');
  await db('chunk_groups').insert({ dataset_id: otherDataset, tracking_id: 'g-news', name: 'other news' });
  for (const [i, chunk] of CHUNKS.entries()) {
    const [{ id }] = await db('chunks')
      .insert({ dataset_id: datasetId, tracking_id: chunk.tracking_id, chunk_html: chunk.tracking_id, ...fixtureColumns(chunk, i) })
      .returning('id');
    ids[chunk.tracking_id] = id;
    for (const group of chunk.groups ?? []) await db('chunk_group_bookmarks').insert({ group_id: ids[group], chunk_id: id });
  }
});
afterAll(async () => {
  await store?.close();
});

type BadCase = [name: string, filter: unknown, message: string];
const must = (condition: unknown) => ({ must: [condition] });

const BAD: BadCase[] = [
  ['not an object', 'tag_set', 'filter: must be an object'],
  ['must not a list', { must: { field: 'tag_set', match_any: ['a'] } }, 'filter.must: must be a list of conditions'],
  ['condition not an object', must('tag_set'), 'filter.must[0]: must be a condition object'],
  [
    'unknown field',
    {
      must: [
        { field: 'tag_set', match_any: ['a'] },
        { field: 'colour', match_any: ['red'] },
      ],
    },
    'filter.must[1]: field "colour" is not filterable (use tag_set, link, tracking_id, num_value',
  ],
  ['field not a string', must({ field: 3, match_any: ['a'] }), 'filter.must[0].field: must be a string'],
  ['no operator', must({ field: 'tag_set' }), 'filter.must[0]: gives no operator for field "tag_set"'],
  ['neither field nor ids', must({ match_any: ['a'] }), 'filter.must[0]: is neither a field condition'],
  ['field and ids', must({ field: 'tag_set', match_any: ['a'], ids: [] }), 'filter.must[0]: has both field and ids/tracking_ids'],
  ['empty match_any', must({ field: 'tag_set', match_any: [] }), 'filter.must[0].match_any: must be a non-empty list'],
  ['match_any of an object', must({ field: 'tag_set', match_any: ['a', {}] }), 'filter.must[0].match_any[1]: must be a string or a number'],
  ['num_value match of a word', must({ field: 'num_value', match_any: ['abc'] }), 'filter.must[0].match_any[0]: "abc" is not a number'],
  ['range without bounds', must({ field: 'num_value', range: {} }), 'filter.must[0].range: give at least one of gt, gte, lt, lte'],
  [
    'range bound not a number',
    {
      should: [
        { field: 'tag_set', match_any: ['a'] },
        { field: 'num_value', range: { gt: 'abc' } },
      ],
    },
    'filter.should[1].range.gt: "abc" is not a number',
  ],
  ['range on a date field', must({ field: 'time_stamp', range: { gt: 1 } }), 'filter.must[0]: range does not apply to field "time_stamp" (use date_range)'],
  ['date_range on a number field', must({ field: 'num_value', date_range: { gt: '2024-01-01' } }), 'date_range does not apply to field "num_value"'],
  ['boolean on tag_set', must({ field: 'tag_set', boolean: true }), 'filter.must[0]: boolean does not apply to field "tag_set"'],
  ['boolean on num_value', must({ field: 'num_value', boolean: false }), 'boolean does not apply to field "num_value"'],
  ['metadata boolean not a boolean', must({ field: 'metadata.x', boolean: 'yes' }), 'filter.must[0].boolean: must be true or false'],
  ['match on location', must({ field: 'location', match_any: ['paris'] }), 'match_any does not apply to field "location"'],
  ['geo on metadata', must({ field: 'metadata.x', geo_radius: { center: PARIS, radius: 1 } }), 'geo_radius does not apply to field "metadata.x"'],
  ['bad month', must({ field: 'time_stamp', date_range: { gte: '2024-13-01' } }), 'filter.must[0].date_range.gte: "2024-13-01" is not a date or date-time'],
  ['no 30 February', must({ field: 'created_at', date_range: { lt: '2024-02-30' } }), 'filter.must[0].date_range.lt: "2024-02-30" is not a date'],
  ['no 29 February 2023', must({ field: 'metadata.published', date_range: { lt: '2023-02-29' } }), '"2023-02-29" is not a date'],
  ['not a date', must({ field: 'time_stamp', date_range: { gt: 'yesterday' } }), '"yesterday" is not a date'],
  ['hour 24', must({ field: 'time_stamp', date_range: { gt: '2024-01-01T24:00:00' } }), 'is not a date'],
  ['date not a string', must({ field: 'time_stamp', date_range: { gt: 20240101 } }), '20240101 is not a date'],
  [
    'latitude out of range',
    must({ field: 'location', geo_radius: { center: { lat: 95, lon: 0 }, radius: 10 } }),
    'filter.must[0].geo_radius.center.lat: 95 is not a latitude',
  ],
  [
    'longitude out of range',
    must({ field: 'location', geo_bounding_box: { top_left: { lat: 1, lon: 200 }, bottom_right: { lat: 0, lon: 1 } } }),
    'filter.must[0].geo_bounding_box.top_left.lon: 200 is not a longitude',
  ],
  ['negative radius', must({ field: 'location', geo_radius: { center: PARIS, radius: -1 } }), 'filter.must[0].geo_radius.radius: must be a distance in metres'],
  [
    'box upside down',
    must({ field: 'location', geo_bounding_box: { top_left: { lat: 0, lon: 0 }, bottom_right: { lat: 1, lon: 1 } } }),
    'top_left must not be south of bottom_right',
  ],
  [
    'polygon of two points',
    must({ field: 'location', geo_polygon: { exterior: [PARIS, LYON, PARIS] } }),
    'filter.must[0].geo_polygon.exterior: a ring needs at least three distinct points',
  ],
  [
    'polygon hole point out of range',
    must({ field: 'location', geo_polygon: { exterior: [PARIS, LYON, LONDON], interior: [[PARIS, LYON, { lat: -91, lon: 0 }]] } }),
    'filter.must[0].geo_polygon.interior[0][2].lat',
  ],
  ['bare metadata', must({ field: 'metadata', match_any: ['a'] }), 'field "metadata" is not filterable: name a metadata key'],
  ['metadata without a key', must({ field: 'metadata.', match_any: ['a'] }), 'field "metadata." is not filterable'],
  ['metadata with an empty key', must({ field: 'metadata.a..b', match_any: ['a'] }), 'field "metadata.a..b" is not filterable'],
  ['ids not UUIDs', must({ ids: ['nope'] }), 'filter.must[0].ids[0]: "nope" is not a UUID'],
  ['ids naming nothing', { must_not: [{ ids: [], tracking_ids: [] }] }, 'filter.must_not[0]: ids and tracking_ids name no chunk'],
  ['tracking_ids of numbers', must({ tracking_ids: [1] }), 'filter.must[0].tracking_ids[0]: must be a string'],
  ['group_ids not UUIDs', must({ field: 'group_ids', match_any: ['g-news'] }), 'filter.must[0].match_any[0]: "g-news" is not a UUID'],
];

describe(`chunk filters (${mode})`, () => {
  /** The tracking ids a filter selects, over `chunks` and over `chunks as c` joined to a table with the same column names. */
  async function select(filter: Filter) {
    const plain = await applyChunkFilter(store.db('chunks').where({ dataset_id: datasetId }), filter).pluck('tracking_id');
    const aliased = await applyChunkFilter(
      store.db('chunks as c').join('datasets as d', 'd.id', 'c.dataset_id').where('c.dataset_id', datasetId),
      filter,
      'c',
    ).pluck('c.tracking_id');
    expect(aliased.sort()).toEqual(plain.sort());
    return plain.sort();
  }

  it.each(CASES)('%s', async (_name, filter, expected) => {
    const resolved = typeof filter === 'function' ? filter() : filter;
    expect(() => validateChunkFilter(resolved)).not.toThrow();
    expect(await select(resolved)).toEqual([...expected].sort());
  });

  it.each(BAD)('refuses %s', (_name, filter, message) => {
    const query = store.db('chunks');
    for (const attempt of [() => validateChunkFilter(filter as T.ChunkFilter), () => applyChunkFilter(query, filter as T.ChunkFilter)]) {
      let error: unknown;
      try {
        attempt();
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(400);
      expect((error as HttpError).message).toContain(message);
    }
    expect(query.toString()).toBe('select * from "chunks"'); // a refused filter adds nothing
  });

  it('reads dates the same whatever the session time zone', async () => {
    const filters: [Filter, string[]][] = [
      [field({ field: 'time_stamp', date_range: { gte: '2024-03-01', lte: '2024-03-01T14:00:00+02:00' } }), ['dates']],
      [field({ field: 'created_at', date_range: { lt: '2025-01-02T13:30:00+01:00' } }), ['paris', 'versailles']],
      [field({ field: 'metadata.published', date_range: { gte: '2024-03-01T10:00:00', lte: '2024-03-01T10:00:00Z' } }), ['london', 'paris']],
    ];
    await store.db.transaction(async (trx) => {
      await trx.raw(`set local time zone 'Pacific/Kiritimati'`); // UTC+14
      for (const [filter, expected] of filters) {
        expect((await applyChunkFilter(trx('chunks').where({ dataset_id: datasetId }), filter).pluck('tracking_id')).sort()).toEqual(expected);
      }
    });
  });

  it('names the request field it was given', () => {
    expect(() => validateChunkFilter(must({ field: 'colour', match_any: ['red'] }) as T.ChunkFilter, 'filters')).toThrow(/^filters\.must\[0\]: field "colour"/);
  });

  it('binds every user value as a parameter', () => {
    const filter = {
      must: [
        { field: "metadata.it's", match_any: ["o'hara"] },
        { field: 'tag_set', match_any: ["x'); drop table chunks; --"] },
      ],
    };
    const { sql, bindings } = applyChunkFilter(store.db('chunks'), filter).toSQL();
    expect(sql).not.toContain("o'hara");
    expect(sql).not.toContain('drop table');
    expect(bindings).toEqual(expect.arrayContaining([["it's"], ["o'hara"], ["x'); drop table chunks; --"]]));
  });
});
