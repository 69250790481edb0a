// The crawl: breadth-first from the start URL and the sitemaps' URLs, one request at a time,
// each page visited once, until `limit` pages are stored. Every URL visited ends as a stored
// page or as a skip that says why; URLs outside the scope are not visited and not reported.
import type { OutboundSettings } from '../../engines/outbound.js';
import { htmlChunks, textChunks } from './chunks.js';
import { PoliteFetcher } from './fetcher.js';
import { readHtmlPage, tagSelection } from './page.js';
import { RobotsCache } from './robots.js';
import { CrawlScope } from './scope.js';
import { sitemapPages } from './sitemap.js';
import { type CrawlEvent, type CrawlPoliteness, DEFAULT_POLITENESS, type WebsiteCrawlOptions } from './types.js';
import { normaliseUrl } from './urls.js';

const HTML = 'text/html';
const PAGE_TYPES = [HTML, 'application/xhtml+xml', 'text/plain'];

export interface CrawlDeps {
  outbound: OutboundSettings;
  /** Stops the crawl: the iteration throws the signal's reason. */
  signal?: AbortSignal;
  politeness?: Partial<CrawlPoliteness>;
}

export async function* crawlWebsite(options: WebsiteCrawlOptions, deps: CrawlDeps): AsyncGenerator<CrawlEvent> {
  const start = normaliseUrl(options.siteUrl);
  if (!start) throw new TypeError('siteUrl: not an http or https URL');
  const scope = new CrawlScope(start, options);
  const selection = tagSelection(options.includeTags, options.excludeTags);
  const fetcher = new PoliteFetcher(deps.outbound, { ...DEFAULT_POLITENESS, ...deps.politeness }, deps.signal);
  const robots = new RobotsCache(fetcher);

  // Every URL ever queued (or reached by a redirect), so none is visited twice.
  const seen = new Set([start]);
  const queue = [start];
  const enqueue = (url: string) => {
    if (seen.has(url) || !scope.reaches(url) || scope.pathRefusal(url)) return;
    seen.add(url);
    queue.push(url);
  };
  if (!options.ignoreSitemap) {
    const origin = new URL(start).origin;
    for (const url of await sitemapPages(fetcher, origin, await robots.of(start))) enqueue(url);
  }

  let stored = 0;
  for (let next = 0; next < queue.length && stored < options.limit; next++) {
    deps.signal?.throwIfAborted();
    const event = await visit(queue[next]);
    if ('page' in event) stored++;
    yield event;
  }

  async function visit(url: string): Promise<CrawlEvent> {
    const skip = (reason: string): CrawlEvent => ({ skipped: { url, reason } });
    const refusal = (await robots.of(url)).refusal(url);
    if (refusal) return skip(refusal);
    const fetched = await fetcher.get(url, PAGE_TYPES);
    if (fetched.kind === 'status') return skip(`status ${fetched.status}`);
    if (fetched.kind === 'failed') return skip(fetched.reason);

    // A redirect's target is judged as a link to it would be (robots.txt included, though only
    // after the fact: outboundFetch follows redirects itself).
    const final = normaliseUrl(fetched.url) ?? url;
    if (final !== url) {
      if (seen.has(final)) return skip(`redirected to ${final}, which the crawl visits already`);
      if (!scope.reaches(final)) return skip(`redirected to ${final}, outside the crawled site`);
      const redirectRefusal = (await robots.of(final)).refusal(final);
      if (redirectRefusal) return skip(`redirected to ${final}: ${redirectRefusal}`);
      seen.add(final);
    }

    const read = fetched.contentType === 'text/plain' ? null : readHtmlPage(fetched.text, final, selection);
    for (const link of read?.links ?? []) enqueue(link);
    // Only the start URL (fetched for its links) or a redirect's target can be outside the paths.
    const pathRefusal = scope.pathRefusal(final);
    if (pathRefusal) return skip(pathRefusal);
    const chunks = read ? htmlChunks(final, read.html, options) : textChunks(final, fetched.text, options);
    if (!chunks.length) return skip('no text content');
    return { page: { url: final, title: read?.title ?? null, chunks } };
  }
}
