// Highlighting off the service's thread when that thread is the limit. Marking a page of results
// is the largest share of a search's work on the service's thread (about a sixth under load); that
// thread also parses, validates, queries and answers every request, so under concurrent load it is
// what bounds throughput. Handing a page to another thread costs about 0.3 ms of latency, though,
// which a quiet service should not pay: a page goes to the pool only while other requests are in
// flight and the service's thread has been busy most of the last moment (its event loop
// utilization), and is marked in place otherwise. Either way the answer is the same.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import Piscina from 'piscina';
import type * as T from '../../sdk/src/generated/types.gen.js';
import { type Highlighted, highlight } from './highlights.js';

interface PageTask {
  htmls: string[];
  query: string;
  options: T.HighlightOptions | null | undefined;
}

export interface HighlightPoolOptions {
  /** The share of the last moment the service's thread was busy above which pages go to the pool. */
  offloadAbove?: number;
  /** Requests in flight, the caller's included (unknown: the thread's business alone decides). */
  requestsInFlight?: () => number;
}

/** How long a measure of the thread's business stands before it is taken again. */
const MOMENT_MS = 100;

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
  private readonly offloadAbove: number;
  private readonly requestsInFlight: () => number;
  private moment = { at: performance.now(), loop: performance.eventLoopUtilization(), busy: 0 };

  constructor(options: HighlightPoolOptions = {}) {
    this.offloadAbove = options.offloadAbove ?? 0.75;
    this.requestsInFlight = options.requestsInFlight ?? (() => Infinity);
  }

  /** Each chunk's HTML highlighted for the query, in order. */
  async page(htmls: string[], query: string, options: T.HighlightOptions | null | undefined): Promise<Highlighted[]> {
    if (htmls.length === 0) return [];
    if (this.requestsInFlight() > 1 && this.busy() > this.offloadAbove) {
      try {
        return await this.pool.run({ htmls, query, options });
      } catch {
        // A thread that failed (or a pool closing) never fails a search: the page is marked here.
      }
    }
    return htmls.map((html) => highlight(html, query, options));
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** The share of the last moment the service's thread spent working. */
  private busy(): number {
    const now = performance.now();
    if (now - this.moment.at >= MOMENT_MS) {
      const loop = performance.eventLoopUtilization();
      this.moment = { at: now, loop, busy: performance.eventLoopUtilization(loop, this.moment.loop).utilization };
    }
    return this.moment.busy;
  }
}
