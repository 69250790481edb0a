// The highlighting threads answer exactly what highlighting in place does, a pool that can no
// longer run a task still answers, and a quiet service (or one answering a single request) marks its
// pages in place.
import { afterAll, describe, expect, it, vi } from 'vitest';
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
  // Every page to the threads, however quiet the service.
  const pool = new HighlightPool({ offloadAbove: -1 });
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
    const closed = new HighlightPool({ offloadAbove: -1 });
    await closed.close();
    const html = '<p>an order for the account</p>';
    expect(await closed.page([html], 'order', null)).toEqual([highlight(html, 'order', null)]);
  });

  it('marks pages in place while the service is quiet or answers no other request, on the threads otherwise', async () => {
    let requests = 2;
    const quiet = new HighlightPool({ requestsInFlight: () => requests });
    const run = vi.spyOn((quiet as unknown as { pool: { run: () => unknown } }).pool, 'run');
    const html = '<p>an order for the account</p>';
    const busyMoment = () => {
      const until = performance.now() + 150;
      while (performance.now() < until);
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await quiet.page([html], 'order', null)).toEqual([highlight(html, 'order', null)]);
      expect(run).not.toHaveBeenCalled();
      // The thread busy for a whole moment, but for the one request alone: nothing waits for it.
      requests = 1;
      busyMoment();
      expect(await quiet.page([html], 'order', null)).toEqual([highlight(html, 'order', null)]);
      expect(run).not.toHaveBeenCalled();
      // Busy, and another request in flight.
      requests = 2;
      busyMoment();
      expect(await quiet.page([html], 'order', null)).toEqual([highlight(html, 'order', null)]);
      expect(run).toHaveBeenCalledTimes(1);
    } finally {
      await quiet.close();
    }
  });
});
