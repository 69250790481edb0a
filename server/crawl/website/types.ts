// What a website crawl is asked for and what it hands back.

export interface WebsiteCrawlOptions {
  /** Where the crawl starts. */
  siteUrl: string;
  /** At most this many pages are stored (pages that yielded content). */
  limit: number;
  /** Else /sitemap.xml and the sitemaps robots.txt names give start URLs too. */
  ignoreSitemap: boolean;
  /** Else the crawl stays on siteUrl's origin. */
  allowExternalLinks: boolean;
  /** Regular expressions on the URL path: when given, only matching URLs are crawled. */
  includePaths?: string[];
  /** Regular expressions on the URL path: matching URLs are not crawled. */
  excludePaths?: string[];
  /** CSS selectors: when given, only these elements' content is kept. */
  includeTags?: string[];
  /** CSS selectors: these elements are removed before the content is read. */
  excludeTags?: string[];
  /** Removed from headings. */
  headingRemoveStrings?: string[];
  /** Removed from bodies. */
  bodyRemoveStrings?: string[];
}

export interface PageChunk {
  /** Derived from the page URL and the chunk's position: a re-crawl updates the same chunks. */
  trackingId: string;
  /** The section's heading and body. */
  html: string;
  /** The heading path above the section, outermost first (h1 > h2 > …). */
  headings: string[];
}

export interface CrawledPage {
  url: string;
  title: string | null;
  chunks: PageChunk[];
}

/** A page not stored, and why (robots.txt, an error status, not HTML, too large, no answer…). */
export interface CrawlSkip {
  url: string;
  reason: string;
}

export type CrawlEvent = { page: CrawledPage } | { skipped: CrawlSkip };

export interface CrawlPoliteness {
  /** Larger answers are not read. */
  maxPageBytes: number;
  /** For one request, its body included. */
  pageTimeoutMs: number;
  /** Between the end of one request and the start of the next to the same host. */
  minDelayMs: number;
}

// 10 MB holds any real page; 15 s is what a slow but working site needs. Requests are already one
// at a time, so no delay is added unless asked for: the service asks for CRAWL_REQUESTS_PER_SECOND's,
// a site for its robots.txt Crawl-delay.
export const DEFAULT_POLITENESS: CrawlPoliteness = Object.freeze({ maxPageBytes: 10 * 1024 * 1024, pageTimeoutMs: 15_000, minDelayMs: 0 });

/** The token robots.txt groups are matched against. */
export const CRAWLER_TOKEN = 'ChunkSearchCrawler';
export const USER_AGENT = `${CRAWLER_TOKEN}/0.13.0 (chunk-search-service website crawler)`;
