// The crawl's only way out: every request goes through outboundFetch (so private addresses stay
// refused unless the operator allows them), paced per host (the instance's request rate, or the
// site's robots.txt Crawl-delay when that is longer), with a size cap. The crawl awaits each
// request before the next, so there is never more than one at a time. A redirect's hops are one
// request: outboundFetch follows them at once, checking each.
import { OutboundRefusedError, type OutboundSettings, outboundFetch } from '../../engines/outbound.js';
import { boundedBytes, decodeText } from '../body.js';
import { HostPacer } from '../pacer.js';
import { type CrawlPoliteness, USER_AGENT } from './types.js';

export type Fetched =
  /** A 2xx answer's body, from the URL it finally came from (after redirects). */
  | { kind: 'body'; url: string; contentType: string; text: string }
  /** Any other status; its body is not read. */
  | { kind: 'status'; status: number }
  /** No usable answer. */
  | { kind: 'failed'; reason: string };

/** A 2xx answer's bytes, undecoded (a gzipped sitemap), or why there are none. */
export type FetchedBytes =
  /** `header` is the whole Content-Type, charset included. */
  { kind: 'bytes'; url: string; contentType: string; header: string; bytes: Uint8Array } | Exclude<Fetched, { kind: 'body' }>;

export class PoliteFetcher {
  private readonly pacer: HostPacer;

  constructor(
    private readonly outbound: OutboundSettings,
    private readonly politeness: CrawlPoliteness,
    private readonly signal?: AbortSignal,
  ) {
    this.pacer = new HostPacer(politeness.minDelayMs, signal);
  }

  /** The most bytes a body may have, compressed or not. */
  get maxBytes(): number {
    return this.politeness.maxPageBytes;
  }

  /** The origin's site asks for this wait between requests (robots.txt's Crawl-delay, in seconds). */
  crawlDelay(origin: string, seconds: number): void {
    this.pacer.askedDelay(new URL(origin).host, seconds * 1000);
  }

  /**
   * GETs the URL. `accepts` lists the media types whose bodies are read (all when omitted).
   * Throws only when the crawl is aborted.
   */
  async get(url: string, accepts?: readonly string[]): Promise<Fetched> {
    const fetched = await this.getBytes(url, accepts);
    if (fetched.kind !== 'bytes') return fetched;
    return { kind: 'body', url: fetched.url, contentType: fetched.contentType, text: decodeText(fetched.bytes, fetched.header) };
  }

  /** GETs the URL as get does, the body left undecoded. */
  async getBytes(url: string, accepts?: readonly string[]): Promise<FetchedBytes> {
    try {
      return await this.pacer.paced(url, () => this.exchange(url, accepts));
    } catch (error) {
      this.signal?.throwIfAborted();
      if (error instanceof OutboundRefusedError) return { kind: 'failed', reason: `refused: ${error.message}` };
      // A body cut short by the timeout fails with the timer's reason, which names the time.
      return { kind: 'failed', reason: (error as Error).message || 'the connection failed' };
    }
  }

  private async exchange(url: string, accepts?: readonly string[]): Promise<FetchedBytes> {
    const { maxPageBytes, pageTimeoutMs } = this.politeness;
    const response = await outboundFetch(this.outbound, url, {
      headers: { 'user-agent': USER_AGENT, accept: accepts?.join(', ') || '*/*' },
      timeoutMs: pageTimeoutMs,
      signal: this.signal,
    });
    const header = response.headers.get('content-type') ?? '';
    const contentType = header.split(';')[0].trim().toLowerCase();
    const unread = (fetched: FetchedBytes) => response.body?.cancel().then(() => fetched) ?? fetched;
    if (response.status < 200 || response.status > 299) return unread({ kind: 'status', status: response.status });
    if (accepts && !accepts.includes(contentType)) return unread({ kind: 'failed', reason: `the content type (${contentType || 'none'}) is not crawled` });
    const bytes = await boundedBytes(response, maxPageBytes);
    if (bytes === null) return { kind: 'failed', reason: `larger than ${maxPageBytes} bytes` };
    return { kind: 'bytes', url: response.url || url, contentType, header, bytes };
  }
}
