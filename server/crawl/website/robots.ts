// robots.txt, read once per origin and obeyed as RFC 9309 says: a 4xx answer means no rules
// (allow all); a 5xx answer or none at all means the site may not want crawling, so nothing on it
// is fetched (complete disallow), which is the conservative choice the RFC asks for. A Crawl-delay
// for our user agent (or for `*`) spaces the requests to the site, when longer than the crawl's own
// spacing (up to MAX_HOST_DELAY_MS).
import robotsParser from 'robots-parser';
import type { PoliteFetcher } from './fetcher.js';
import { CRAWLER_TOKEN } from './types.js';

export interface SiteRules {
  /** Why robots.txt keeps the crawl from the URL, or null when it may be fetched. */
  refusal(url: string): string | null;
  /** The sitemaps robots.txt names. */
  sitemaps: string[];
}

const ALLOW_ALL: SiteRules = { refusal: () => null, sitemaps: [] };

export async function readRobots(fetcher: PoliteFetcher, origin: string): Promise<SiteRules> {
  const url = `${origin}/robots.txt`;
  const fetched = await fetcher.get(url);
  if (fetched.kind === 'status' && fetched.status >= 400 && fetched.status < 500) return ALLOW_ALL;
  if (fetched.kind !== 'body') {
    const why = fetched.kind === 'status' ? `status ${fetched.status}` : fetched.reason;
    return { refusal: () => `robots.txt could not be read (${why}), so the site is not crawled`, sitemaps: [] };
  }
  const robots = robotsParser(url, fetched.text);
  const delay = robots.getCrawlDelay(CRAWLER_TOKEN);
  if (delay !== undefined) fetcher.crawlDelay(origin, delay);
  return {
    // Undefined means the URL is not on this origin: the caller asks the right origin's rules.
    refusal: (page) => (robots.isAllowed(page, CRAWLER_TOKEN) === false ? 'disallowed by robots.txt' : null),
    sitemaps: robots.getSitemaps(),
  };
}

/** Each origin's rules, read when the crawl first reaches it. */
export class RobotsCache {
  private readonly rules = new Map<string, Promise<SiteRules>>();

  constructor(private readonly fetcher: PoliteFetcher) {}

  of(url: string): Promise<SiteRules> {
    const { origin } = new URL(url);
    let rules = this.rules.get(origin);
    if (!rules) this.rules.set(origin, (rules = readRobots(this.fetcher, origin)));
    return rules;
  }
}
