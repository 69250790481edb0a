// The crawl's only way out: every request goes through outboundFetch (so private addresses stay
// refused unless the operator allows them), spaced per host, with a size cap. The crawl awaits each
// request before the next, so there is never more than one at a time. A redirect's hops are one
// request: outboundFetch follows them at once, checking each.
import { setTimeout as sleep } from 'node:timers/promises';
import { OutboundRefusedError, type OutboundSettings, outboundFetch } from '../../engines/outbound.js';
import { boundedText } from '../body.js';
import { type CrawlPoliteness, USER_AGENT } from './types.js';

export type Fetched =
  /** A 2xx answer's body, from the URL it finally came from (after redirects). */
  | { kind: 'body'; url: string; contentType: string; text: string }
  /** Any other status; its body is not read. */
  | { kind: 'status'; status: number }
  /** No usable answer. */
  | { kind: 'failed'; reason: string };

export class PoliteFetcher {
  /** When the last request to each host ended. */
  private readonly lastEnded = new Map<string, number>();

  constructor(
    private readonly outbound: OutboundSettings,
    private readonly politeness: CrawlPoliteness,
    private readonly signal?: AbortSignal,
  ) {}

  /**
   * GETs the URL. `accepts` lists the media types whose bodies are read (all when omitted).
   * Throws only when the crawl is aborted.
   */
  async get(url: string, accepts?: readonly string[]): Promise<Fetched> {
    const host = new URL(url).host;
    const wait = (this.lastEnded.get(host) ?? -Infinity) + this.politeness.minDelayMs - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal: this.signal });
    this.signal?.throwIfAborted();
    try {
      return await this.exchange(url, accepts);
    } catch (error) {
      this.signal?.throwIfAborted();
      if (error instanceof OutboundRefusedError) return { kind: 'failed', reason: `refused: ${error.message}` };
      // A body cut short by the timeout fails with the timer's reason, which names the time.
      return { kind: 'failed', reason: (error as Error).message || 'the connection failed' };
    } finally {
      this.lastEnded.set(host, Date.now());
    }
  }

  private async exchange(url: string, accepts?: readonly string[]): Promise<Fetched> {
    const { maxPageBytes, pageTimeoutMs } = this.politeness;
    const response = await outboundFetch(this.outbound, url, {
      headers: { 'user-agent': USER_AGENT, accept: accepts?.join(', ') || '*/*' },
      timeoutMs: pageTimeoutMs,
      signal: this.signal,
    });
    const contentType = response.headers.get('content-type') ?? '';
    const mediaType = contentType.split(';')[0].trim().toLowerCase();
    const unread = (fetched: Fetched) => response.body?.cancel().then(() => fetched) ?? fetched;
    if (response.status < 200 || response.status > 299) return unread({ kind: 'status', status: response.status });
    if (accepts && !accepts.includes(mediaType)) return unread({ kind: 'failed', reason: `the content type (${mediaType || 'none'}) is not crawled` });
    const text = await boundedText(response, maxPageBytes);
    if (text === null) return { kind: 'failed', reason: `larger than ${maxPageBytes} bytes` };
    return { kind: 'body', url: response.url || url, contentType: mediaType, text };
  }
}
