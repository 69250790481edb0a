// Highlighting on threads of its own. Marking a page of results is the largest share of a search's
// work on the service's thread (about a sixth under load); that thread also parses, validates,
// queries and answers every request, so under concurrent load it is the limit, while the other
// cores are not busy. A page is one task; the answer is the same as highlighting in place.
import os from 'node:os';
import Piscina from 'piscina';
import type * as T from '../../generated/client/types.gen.js';
import { type Highlighted, highlight } from './highlights.js';

interface PageTask {
  htmls: string[];
  query: string;
  options: T.HighlightOptions | null | undefined;
}

export class HighlightPool {
  private readonly pool = new Piscina<PageTask, Highlighted[]>({
    filename: new URL('./highlightWorker.js', import.meta.url).href,
    minThreads: 1,
    // One core stays with the service's thread (another thread holds the vectors).
    maxThreads: Math.max(1, Math.min(4, os.availableParallelism() - 1)),
    idleTimeout: 60_000,
    // The thread registers the TypeScript loader itself, wherever the service runs (tsx, a test runner).
    execArgv: [],
  });

  /** Each chunk's HTML highlighted for the query, in order. */
  async page(htmls: string[], query: string, options: T.HighlightOptions | null | undefined): Promise<Highlighted[]> {
    if (htmls.length === 0) return [];
    try {
      return await this.pool.run({ htmls, query, options });
    } catch {
      // A thread that failed (or a pool closing) never fails a search: the page is marked here.
      return htmls.map((html) => highlight(html, query, options));
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
