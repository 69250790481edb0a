// The in-memory BM25 index reads chunks' terms as printed tsvectors: every lexeme and frequency
// read back must be the database's own, for any text (quotes, backslashes, weights, stripped values).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../server/store/db.js';
import { parseTsvectorText } from '../../server/search/retrieval/bm25/tsvectorText.js';
import { mode, testConfig } from '../support/env.js';

let store: Store;
beforeAll(async () => {
  store = await openStore((await testConfig()).store);
});
afterAll(async () => {
  await store?.close();
});

const TEXTS = [
  'Glaciers retreat; the glacier retreated again and again, again.',
  "It's O'Brien's car: don''t 'quote' me",
  'back\\slash C:\\path\\to\\file and a \\\\ double',
  "a:b c,d e:1 f'g:2 \"double\" 'single'",
  'naïve café déjà-vu 東京 emoji 🙂 tab\there',
  'the of and', // stop words only: an empty tsvector
  Array.from({ length: 300 }, () => 'repeat').join(' '), // more positions than a lexeme keeps
];

const VALUES: ((text: string) => [sql: string, bindings: unknown[]])[] = [
  (text: string) => ['to_tsvector(?, ?)', ['english', text]],
  (text: string) => ['to_tsvector(?, ?)', ['simple', text]],
  (text: string) => ["setweight(to_tsvector(?, ?), 'A') || to_tsvector(?, ?)", ['english', text, 'simple', text]],
  (text: string) => ['strip(to_tsvector(?, ?))', ['english', text]],
  // Lexemes as given, quotes and backslashes kept (no positions).
  (text: string) => ['array_to_tsvector(?::text[])', [[...new Set(text.split(/\s+/).filter(Boolean))]]],
];

/** Written in tsvector syntax: quoted lexemes with quotes, backslashes, spaces and colons, weights, positions. */
const LITERAL = "'it''s':1,4B 'back\\\\slash':2 'a b:c':3A,7C plain:5,6 'q''''q\\\\':8 lone";

/** The tsvector SQL `value` as the database prints it, and its lexemes and frequencies as its unnest gives them. */
async function printedAndUnnested(value: string, bindings: unknown[]): Promise<{ printed: string; terms: string[]; tfs: number[] }> {
  const { rows } = await store.db.raw(
    `select v::text as printed,
            coalesce(array(select lexeme from unnest(v)), '{}') as terms,
            coalesce(array(select coalesce(array_length(positions, 1), 1) from unnest(v)), '{}') as tfs
       from (select ${value} as v) x`,
    bindings as never,
  );
  const [{ printed, terms, tfs }] = rows;
  return { printed, terms, tfs: tfs.map(Number) };
}

describe(`printed tsvectors read back (${mode})`, () => {
  it("reads every lexeme and frequency as the database's own unnest gives them", async () => {
    for (const text of TEXTS) {
      for (const value of VALUES) {
        const [sql, bindings] = value(text);
        const { printed, terms, tfs } = await printedAndUnnested(sql, bindings);
        expect(parseTsvectorText(printed), `${sql} of ${text.slice(0, 30)}`).toEqual({ terms, tfs });
      }
    }
  });

  it('reads lexemes holding quotes, backslashes, spaces and colons, with weights', async () => {
    const { printed, terms, tfs } = await printedAndUnnested('?::tsvector', [LITERAL]);
    expect(terms).toEqual(expect.arrayContaining(["it's", 'back\\slash', 'a b:c', "q''q\\"]));
    expect(parseTsvectorText(printed)).toEqual({ terms, tfs });
  });

  it('refuses what is not a printed tsvector', () => {
    expect(() => parseTsvectorText('plain words')).toThrow(/not a printed tsvector/);
    expect(() => parseTsvectorText("'open")).toThrow(/not closed/);
  });
});
