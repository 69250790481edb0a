// The filter cases every engine must agree on: a fixture of chunks with every filterable field, and
// a table of filters with the tracking ids each must select. Used by the SQL-level filter tests and
// by the search-level suite that runs each case through every search type and lexical engine.
import type * as T from '../../sdk/src/generated/types.gen.js';

export const PARIS = { lat: 48.8566, lon: 2.3522 };
export const VERSAILLES = { lat: 48.8049, lon: 2.1204 }; // 17.9 km from Paris
export const LONDON = { lat: 51.5074, lon: -0.1278 }; // 344 km from Paris
export const LYON = { lat: 45.764, lon: 4.8357 }; // 391 km from Paris
export const NYC = { lat: 40.7128, lon: -74.006 };
export const SYDNEY = { lat: -33.8688, lon: 151.2093 };
export const SUVA = { lat: -18.1248, lon: 178.4501 }; // Suva and Apia lie either side of the antimeridian
export const APIA = { lat: -13.8333, lon: -171.75 };

export type Groups = 'g-news' | 'g-travel' | 'g-food';
export interface Fixture {
  tracking_id: string;
  tag_set?: string[] | null;
  metadata?: unknown;
  num_value?: number;
  weight?: number;
  time_stamp?: string;
  location?: { lat: number; lon: number };
  link?: string;
  groups?: Groups[];
}

export const CHUNKS: Fixture[] = [
  {
    tracking_id: 'paris',
    tag_set: ['news', 'france'],
    metadata: {
      category: 'travel',
      rating: 4.5,
      tags: ['museum', 'food'],
      author: { name: 'Ann', country: 'FR' },
      published: '2024-03-01T10:00:00Z',
      featured: true,
    },
    num_value: 10,
    weight: 1,
    time_stamp: '2024-01-15 08:00:00',
    location: PARIS,
    link: 'https://ex.com/paris',
    groups: ['g-news', 'g-travel'],
  },
  {
    tracking_id: 'versailles',
    tag_set: ['france', 'history'],
    metadata: { category: 'travel', rating: 4, tags: ['palace'], author: { name: 'Bob', country: 'FR' }, featured: false },
    num_value: 20,
    weight: 2,
    time_stamp: '2024-02-01 00:00:00',
    location: VERSAILLES,
    link: 'https://ex.com/versailles',
    groups: ['g-travel'],
  },
  {
    tracking_id: 'london',
    tag_set: ['news', 'uk'],
    metadata: { category: 'news', rating: 3, author: { name: 'Cat', country: 'UK' }, published: '2024-03-01T12:00:00+02:00' },
    num_value: 30,
    time_stamp: '2024-03-01 12:30:00',
    location: LONDON,
    link: 'https://ex.com/london',
    groups: ['g-news'],
  },
  {
    tracking_id: 'lyon',
    tag_set: ['france', 'food'],
    metadata: { category: 'food', rating: '5', tags: 'food', published: '2024-02-29' },
    num_value: 40,
    time_stamp: '2023-12-31 23:59:59',
    location: LYON,
    groups: ['g-food'],
  },
  {
    tracking_id: 'nyc',
    tag_set: ['us', 'news'],
    metadata: { category: 'news', rating: 2, tags: ['food', 'nightlife'], author: { name: 'Dan' }, count: 100 },
    num_value: 50,
    time_stamp: '2024-06-01 00:00:00',
    location: NYC,
    groups: ['g-news', 'g-food'],
  },
  { tracking_id: 'sydney', tag_set: ['au'], metadata: { category: 'travel', rating: 5, featured: true, year: 2024 }, num_value: -5, location: SYDNEY },
  { tracking_id: 'suva', tag_set: ['fj', 'islands'], metadata: { category: 'travel', rating: 3.5, items: [{ sku: 'a' }] }, num_value: 0, location: SUVA },
  { tracking_id: 'apia', tag_set: ['ws', 'islands'], metadata: { category: 'travel', published: 'not a date' }, num_value: 0.5, location: APIA },
  { tracking_id: 'untagged', tag_set: [], metadata: null },
  { tracking_id: 'null-tags', tag_set: null, metadata: {}, num_value: 100 },
  { tracking_id: 'numbers', tag_set: ['2024'], metadata: { rating: 'high', year: '2024', mixed: [1, 'two', 3] }, num_value: 1e6, weight: 5 },
  { tracking_id: 'booleans', tag_set: ['misc', 'what?'], metadata: { featured: 'true', flags: [true, false] } },
  { tracking_id: 'deep', tag_set: ['misc'], metadata: { a: { b: { c: 'deep-value' } }, category: 'Travel', 'q?': 1, "it's": 'quoted' } },
  { tracking_id: 'dates', metadata: { published: '2024-03-01 09:59:59', events: ['2020-01-01', '2030-01-01'] }, time_stamp: '2024-03-01 00:00:00' },
  // JSON text, not an object: 1e400 has no JS number, and the 200-digit string must not overflow `numeric`.
  { tracking_id: 'big', metadata: `{"huge": 1e400, "longdigits": "${'9'.repeat(200)}"}` },
];
export const ALL = CHUNKS.map((c) => c.tracking_id).sort();
const except = (...excluded: string[]) => ALL.filter((id) => !excluded.includes(id));

/** Chunk ids by tracking id, and group ids by group tracking id: filled in by the suite that stores the fixture. */
export const ids: Record<string, string> = {};

/** The columns of fixture chunk `i` as the `chunks` table holds them (chunk n was created on 2025-01-n at 12:00 UTC). */
export function fixtureColumns(chunk: Fixture, i: number) {
  return {
    tag_set: chunk.tag_set === undefined ? null : chunk.tag_set,
    metadata: chunk.metadata == null ? null : typeof chunk.metadata === 'string' ? chunk.metadata : JSON.stringify(chunk.metadata),
    num_value: chunk.num_value ?? null,
    weight: chunk.weight ?? 0,
    time_stamp: chunk.time_stamp ?? null,
    location_lat: chunk.location?.lat ?? null,
    location_lon: chunk.location?.lon ?? null,
    link: chunk.link ?? null,
    created_at: new Date(Date.UTC(2025, 0, i + 1, 12)),
  };
}

export type Filter = T.ChunkFilter | null | undefined;
export type Case = [name: string, filter: Filter | (() => Filter), expected: string[]];
export const field = (condition: T.FieldCondition): T.ChunkFilter => ({ must: [condition] });

export const CASES: Case[] = [
  // Empty filters select everything.
  ['no filter', undefined, ALL],
  ['null filter', null, ALL],
  ['empty object', {}, ALL],
  ['empty lists', { must: [], should: [], must_not: [] }, ALL],
  ['null lists', { must: null, should: null, must_not: null }, ALL],

  // HasChunkIDCondition: with both lists, a chunk named by either matches.
  ['ids', () => ({ must: [{ ids: [ids.paris, ids.london] }] }), ['london', 'paris']],
  ['tracking_ids', { must: [{ tracking_ids: ['nyc', 'missing'] }] }, ['nyc']],
  ['ids or tracking_ids', () => ({ must: [{ ids: [ids.paris], tracking_ids: ['london'] }] }), ['london', 'paris']],
  ['empty ids beside tracking_ids', { must: [{ ids: [], tracking_ids: ['nyc'] }] }, ['nyc']],
  ['must_not ids', () => ({ must_not: [{ ids: [ids.paris] }] }), except('paris')],

  ['tag_set match_any', field({ field: 'tag_set', match_any: ['news'] }), ['london', 'nyc', 'paris']],
  ['tag_set match_any of two', field({ field: 'tag_set', match_any: ['uk', 'au'] }), ['london', 'sydney']],
  ['tag_set match_all', field({ field: 'tag_set', match_all: ['news', 'france'] }), ['paris']],
  ['tag_set match_all of one', field({ field: 'tag_set', match_all: ['france'] }), ['lyon', 'paris', 'versailles']],
  ['tag_set matched by a number', field({ field: 'tag_set', match_any: [2024] }), ['numbers']],
  ['tag with a question mark', field({ field: 'tag_set', match_any: ['what?'] }), ['booleans']],
  ['tag that looks like SQL', field({ field: 'tag_set', match_any: ["x'); drop table chunks; --"] }), []],
  ['must_not tag_set keeps untagged chunks', { must_not: [{ field: 'tag_set', match_any: ['news'] }] }, except('london', 'nyc', 'paris')],

  ['link match_any', field({ field: 'link', match_any: ['https://ex.com/paris', 'https://ex.com/london'] }), ['london', 'paris']],
  ['link match_all of one value', field({ field: 'link', match_all: ['https://ex.com/paris', 'https://ex.com/paris'] }), ['paris']],
  ['link match_all of two values', field({ field: 'link', match_all: ['https://ex.com/paris', 'https://ex.com/london'] }), []],
  ['must_not link keeps chunks without one', { must_not: [{ field: 'link', match_any: ['https://ex.com/paris'] }] }, except('paris')],
  ['tracking_id field', field({ field: 'tracking_id', match_any: ['lyon', 'nyc'] }), ['lyon', 'nyc']],

  ['num_value match_any', field({ field: 'num_value', match_any: [10, 30] }), ['london', 'paris']],
  ['num_value matched by a numeric string', field({ field: 'num_value', match_any: ['20'] }), ['versailles']],
  ['num_value fraction', field({ field: 'num_value', match_any: [0.5] }), ['apia']],
  ['num_value range', field({ field: 'num_value', range: { gte: 10, lt: 40 } }), ['london', 'paris', 'versailles']],
  ['num_value range gt', field({ field: 'num_value', range: { gt: 40 } }), ['null-tags', 'numbers', 'nyc']],
  ['num_value range lte', field({ field: 'num_value', range: { lte: 0 } }), ['suva', 'sydney']],
  [
    'must_not num_value range keeps chunks without one',
    { must_not: [{ field: 'num_value', range: { gte: 0 } }] },
    ['big', 'booleans', 'dates', 'deep', 'sydney', 'untagged'],
  ],
  ['two operators must both hold', field({ field: 'num_value', match_any: [10, 20, 30], range: { gt: 15 } }), ['london', 'versailles']],
  ['weight range', field({ field: 'weight', range: { gte: 2 } }), ['numbers', 'versailles']],
  ['weight range between', field({ field: 'weight', range: { gt: 0, lt: 2 } }), ['paris']],

  ['time_stamp dates', field({ field: 'time_stamp', date_range: { gte: '2024-01-01', lt: '2024-03-01' } }), ['paris', 'versailles']],
  ['time_stamp zone-less date-time', field({ field: 'time_stamp', date_range: { gte: '2024-03-01T00:00:00' } }), ['dates', 'london', 'nyc']],
  ['time_stamp Z', field({ field: 'time_stamp', date_range: { gt: '2024-03-01T00:00:00Z' } }), ['london', 'nyc']],
  ['time_stamp offset as UTC', field({ field: 'time_stamp', date_range: { gte: '2024-03-01', lte: '2024-03-01T14:00:00+02:00' } }), ['dates']],
  ['time_stamp after an offset time', field({ field: 'time_stamp', date_range: { gt: '2024-03-01T14:00:00+02:00' } }), ['london', 'nyc']],
  ['time_stamp prefixes', field({ field: 'time_stamp', date_range: { gte: '2024', lt: '2024-02' } }), ['paris']],
  ['time_stamp in the contract form', field({ field: 'time_stamp', date_range: { lte: '2023-12-31 23:59:59.000' } }), ['lyon']],
  ['time_stamp microseconds', field({ field: 'time_stamp', date_range: { gt: '2023-12-31 23:59:58.999999', lt: '2024-01-01' } }), ['lyon']],
  [
    'must_not time_stamp keeps chunks without one',
    { must_not: [{ field: 'time_stamp', date_range: { gte: '2024-01-01' } }] },
    except('dates', 'london', 'nyc', 'paris', 'versailles'),
  ],
  ['created_at', field({ field: 'created_at', date_range: { gte: '2025-01-14' } }), ['big', 'dates']],
  ['created_at with an offset', field({ field: 'created_at', date_range: { lt: '2025-01-02T13:30:00+01:00' } }), ['paris', 'versailles']],
  ['created_at between', field({ field: 'created_at', date_range: { gt: '2025-01-03 12:00:00', lte: '2025-01-05T12:00:00.000Z' } }), ['lyon', 'nyc']],

  ['geo_radius 20 km', field({ field: 'location', geo_radius: { center: PARIS, radius: 20_000 } }), ['paris', 'versailles']],
  ['geo_radius 1 km', field({ field: 'location', geo_radius: { center: PARIS, radius: 1_000 } }), ['paris']],
  ['geo_radius 360 km', field({ field: 'location', geo_radius: { center: PARIS, radius: 360_000 } }), ['london', 'paris', 'versailles']],
  ['geo_radius 0 at the point', field({ field: 'location', geo_radius: { center: NYC, radius: 0 } }), ['nyc']],
  [
    'geo_bounding_box',
    field({ field: 'location', geo_bounding_box: { top_left: { lat: 52, lon: -1 }, bottom_right: { lat: 48, lon: 3 } } }),
    ['london', 'paris', 'versailles'],
  ],
  [
    'geo_bounding_box across the antimeridian',
    field({ field: 'location', geo_bounding_box: { top_left: { lat: -10, lon: 170 }, bottom_right: { lat: -20, lon: -170 } } }),
    ['apia', 'suva'],
  ],
  // Lyon is inside the triangle's bounding box but not the triangle.
  [
    'geo_polygon triangle',
    field({
      field: 'location',
      geo_polygon: {
        exterior: [
          { lat: 50, lon: 0 },
          { lat: 50, lon: 6 },
          { lat: 44, lon: 0 },
        ],
      },
    }),
    ['paris', 'versailles'],
  ],
  [
    'geo_polygon closed, with a hole around Paris',
    field({
      field: 'location',
      geo_polygon: {
        exterior: [
          { lat: 51.2, lon: -5 },
          { lat: 51.2, lon: 8 },
          { lat: 42, lon: 8 },
          { lat: 42, lon: -5 },
          { lat: 51.2, lon: -5 },
        ],
        interior: [
          [
            { lat: 48.9, lon: 2.25 },
            { lat: 48.9, lon: 2.45 },
            { lat: 48.83, lon: 2.45 },
            { lat: 48.83, lon: 2.25 },
          ],
        ],
      },
    }),
    ['lyon', 'versailles'],
  ],
  [
    'must_not geo keeps chunks without a location',
    { must_not: [{ field: 'location', geo_radius: { center: PARIS, radius: 20_000 } }] },
    except('paris', 'versailles'),
  ],

  ['metadata string', field({ field: 'metadata.category', match_any: ['travel'] }), ['apia', 'paris', 'suva', 'sydney', 'versailles']],
  ['metadata strings compare exactly', field({ field: 'metadata.category', match_any: ['Travel'] }), ['deep']],
  ['metadata match_any of two', field({ field: 'metadata.category', match_any: ['news', 'food'] }), ['london', 'lyon', 'nyc']],
  ['metadata nested key', field({ field: 'metadata.author.name', match_any: ['Ann', 'Cat'] }), ['london', 'paris']],
  ['metadata nested match_all', field({ field: 'metadata.author.country', match_all: ['FR'] }), ['paris', 'versailles']],
  ['metadata deep key', field({ field: 'metadata.a.b.c', match_any: ['deep-value'] }), ['deep']],
  ['metadata array index in the path', field({ field: 'metadata.items.0.sku', match_any: ['a'] }), ['suva']],
  ['metadata key with a question mark', field({ field: 'metadata.q?', match_any: [1] }), ['deep']],
  ['metadata key with a quote', field({ field: "metadata.it's", match_any: ['quoted'] }), ['deep']],
  ['metadata missing key', field({ field: 'metadata.missing', match_any: ['x'] }), []],
  ['metadata array or scalar', field({ field: 'metadata.tags', match_any: ['food'] }), ['lyon', 'nyc', 'paris']],
  ['metadata array match_all', field({ field: 'metadata.tags', match_all: ['food', 'nightlife'] }), ['nyc']],
  ['metadata array match_all, other pair', field({ field: 'metadata.tags', match_all: ['food', 'museum'] }), ['paris']],
  ['metadata number matches numbers and numeric strings', field({ field: 'metadata.rating', match_any: [5] }), ['lyon', 'sydney']],
  ['metadata string matches the text of numbers', field({ field: 'metadata.rating', match_any: ['5'] }), ['lyon', 'sydney']],
  ['metadata number exactly', field({ field: 'metadata.rating', match_any: [4] }), ['versailles']],
  ['metadata year as number and as string', field({ field: 'metadata.year', match_any: [2024] }), ['numbers', 'sydney']],
  ['metadata mixed array by number', field({ field: 'metadata.mixed', match_any: [3] }), ['numbers']],
  ['metadata mixed array by string', field({ field: 'metadata.mixed', match_any: ['two'] }), ['numbers']],
  ['metadata mixed array match_all', field({ field: 'metadata.mixed', match_all: [1, 'two'] }), ['numbers']],
  ['metadata mixed array match_all missing one', field({ field: 'metadata.mixed', match_all: [1, 2] }), []],
  ['metadata range skips non-numbers', field({ field: 'metadata.rating', range: { gte: 4 } }), ['lyon', 'paris', 'sydney', 'versailles']],
  ['metadata range between', field({ field: 'metadata.rating', range: { gt: 2, lt: 4 } }), ['london', 'suva']],
  ['metadata range over an array', field({ field: 'metadata.mixed', range: { gt: 2 } }), ['numbers']],
  ['metadata range on an integer', field({ field: 'metadata.count', range: { gte: 100 } }), ['nyc']],
  ['metadata range on a huge number', field({ field: 'metadata.huge', range: { gt: 1e200 } }), ['big']],
  ['metadata range on an overlong numeric string', field({ field: 'metadata.longdigits', range: { gt: 0 } }), []],
  [
    'metadata date_range across zones',
    field({ field: 'metadata.published', date_range: { gte: '2024-03-01T10:00:00Z', lte: '2024-03-01T10:00:00Z' } }),
    ['london', 'paris'],
  ],
  ['metadata date_range skips non-dates', field({ field: 'metadata.published', date_range: { lt: '2024-03-01T10:00:00' } }), ['dates', 'lyon']],
  ['metadata date_range over an array', field({ field: 'metadata.events', date_range: { gt: '2025-01-01' } }), ['dates']],
  ['metadata boolean true', field({ field: 'metadata.featured', boolean: true }), ['paris', 'sydney']],
  ['metadata boolean false', field({ field: 'metadata.featured', boolean: false }), ['versailles']],
  ['metadata boolean in an array', field({ field: 'metadata.flags', boolean: false }), ['booleans']],
  ['metadata "true" as text matches booleans too', field({ field: 'metadata.featured', match_any: ['true'] }), ['booleans', 'paris', 'sydney']],
  [
    'must_not metadata keeps chunks without the key',
    { must_not: [{ field: 'metadata.category', match_any: ['travel'] }] },
    except('apia', 'paris', 'suva', 'sydney', 'versailles'),
  ],

  ['group_tracking_ids', field({ field: 'group_tracking_ids', match_any: ['g-news'] }), ['london', 'nyc', 'paris']],
  ['group_tracking_ids of two', field({ field: 'group_tracking_ids', match_any: ['g-food', 'g-travel'] }), ['lyon', 'nyc', 'paris', 'versailles']],
  ['group_tracking_ids match_all', field({ field: 'group_tracking_ids', match_all: ['g-news', 'g-travel'] }), ['paris']],
  ['group_tracking_ids match_all repeated', field({ field: 'group_tracking_ids', match_all: ['g-news', 'g-news'] }), ['london', 'nyc', 'paris']],
  ['group_tracking_ids unknown', field({ field: 'group_tracking_ids', match_any: ['g-missing'] }), []],
  ['group_ids', () => field({ field: 'group_ids', match_any: [ids['g-food']] }), ['lyon', 'nyc']],
  ['group_ids match_all', () => field({ field: 'group_ids', match_all: [ids['g-news'], ids['g-food'].toUpperCase()] }), ['nyc']],
  ['must_not group', { must_not: [{ field: 'group_tracking_ids', match_any: ['g-news'] }] }, except('london', 'nyc', 'paris')],

  [
    'must: all hold',
    {
      must: [
        { field: 'tag_set', match_any: ['france'] },
        { field: 'num_value', range: { gte: 20 } },
      ],
    },
    ['lyon', 'versailles'],
  ],
  [
    'should: one holds',
    {
      should: [
        { field: 'tag_set', match_any: ['uk'] },
        { field: 'tag_set', match_any: ['au'] },
      ],
    },
    ['london', 'sydney'],
  ],
  [
    'must and should',
    {
      must: [{ field: 'metadata.category', match_any: ['travel'] }],
      should: [
        { field: 'tag_set', match_any: ['islands'] },
        { field: 'num_value', range: { gt: 15 } },
      ],
    },
    ['apia', 'suva', 'versailles'],
  ],
  [
    'must_not: none holds',
    {
      must_not: [
        { field: 'tag_set', match_any: ['news'] },
        { field: 'metadata.category', match_any: ['travel'] },
      ],
    },
    ['big', 'booleans', 'dates', 'deep', 'lyon', 'null-tags', 'numbers', 'untagged'],
  ],
  [
    'must and must_not',
    { must: [{ field: 'tag_set', match_any: ['france'] }], must_not: [{ field: 'group_tracking_ids', match_any: ['g-travel'] }] },
    ['lyon'],
  ],
  [
    'must, should and must_not',
    () => ({
      must: [{ field: 'location', geo_radius: { center: PARIS, radius: 500_000 } }],
      should: [
        { field: 'metadata.featured', boolean: true },
        { field: 'group_tracking_ids', match_any: ['g-news'] },
      ],
      must_not: [{ ids: [ids.paris] }],
    }),
    ['london'],
  ],
  ['should mixing id and field conditions', { should: [{ tracking_ids: ['suva'] }, { field: 'metadata.a.b.c', match_any: ['deep-value'] }] }, ['deep', 'suva']],
];
