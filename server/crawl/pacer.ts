// Requests to one host spaced out: the next starts no sooner than a delay after the last one ended,
// the delay being the larger of the crawl's own (from the instance's request rate) and the one the
// host asks for (robots.txt's Crawl-delay). A crawl awaits each request before the next, so this is
// all the pacing it needs.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The longest Crawl-delay honoured: a longer one is taken as this, so that a crawl of a thousand
 * pages still ends within its step's six hours rather than being cut off and started again.
 */
export const MAX_HOST_DELAY_MS = 10_000;

export class HostPacer {
  /** When the last request to each host ended. */
  private readonly lastEnded = new Map<string, number>();
  /** The delays hosts asked for. */
  private readonly asked = new Map<string, number>();

  constructor(
    private readonly minDelayMs: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** The host (`name:port`, as URL.host spells it) asks for this delay; at most MAX_HOST_DELAY_MS is kept. */
  askedDelay(host: string, ms: number): void {
    if (Number.isFinite(ms) && ms > 0) this.asked.set(host, Math.min(ms, MAX_HOST_DELAY_MS));
  }

  /** The wait between two requests to the host. */
  delayOf(host: string): number {
    return Math.max(this.minDelayMs, this.asked.get(host) ?? 0);
  }

  /** Runs the request once the host's delay has passed; throws the abort reason when aborted meanwhile. */
  async paced<T>(url: string | URL, request: () => Promise<T>): Promise<T> {
    const { host } = new URL(url);
    const wait = (this.lastEnded.get(host) ?? -Infinity) + this.delayOf(host) - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal: this.signal });
    this.signal?.throwIfAborted();
    try {
      return await request();
    } finally {
      this.lastEnded.set(host, Date.now());
    }
  }
}
