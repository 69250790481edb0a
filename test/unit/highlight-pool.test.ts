// The highlighting threads answer exactly what highlighting in place does, and a pool that can no
// longer run a task still answers.
import { afterAll, describe, expect, it } from 'vitest';
import { generateCorpus } from '../../bench/corpus.js';
import { HighlightPool } from '../../server/search/highlightPool.js';
import { highlight } from '../../server/search/highlights.js';

const chunks = generateCorpus({ count: 60, seed: 11 }).map((c) => c.chunk_html as string);
const pages = [
  { query: 'order account', options: undefined },
  { query: 'glaciers "payment error"', options: { highlight_strategy: 'v1', highlight_window: 4, pre_tag: '<em>', post_tag: '</em>' } as const },
  { query: 'upload', options: { highlight_max_num: 1, highlight_delimiters: [' '] } },
];

describe('highlight pool', () => {
  const pool = new HighlightPool();
  afterAll(() => pool.close());

  it('marks a page as highlighting in place does', async () => {
    const htmls = [...chunks, '<p>Glaciers &amp; <b>payment</b> error</p>', ''];
    for (const { query, options } of pages) {
      const expected = htmls.map((html) => highlight(html, query, options));
      expect(expected.some((h) => h.highlights.length > 0)).toBe(true);
      expect(await pool.page(htmls, query, options)).toEqual(expected);
    }
  });

  it('answers in place once its threads are gone', async () => {
    const closed = new HighlightPool();
    await closed.close();
    const html = '<p>an order for the account</p>';
    expect(await closed.page([html], 'order', null)).toEqual([highlight(html, 'order', null)]);
  });
});
