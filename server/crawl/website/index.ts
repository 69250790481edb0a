// A website crawler: robots.txt and sitemaps honoured, pages split into chunks by heading.
// Every request goes through outboundFetch; nothing here touches HTTP handlers or the database.
export { type CrawlDeps, crawlWebsite } from './crawl.js';
export {
  type CrawledPage,
  type CrawlEvent,
  type CrawlPoliteness,
  type CrawlSkip,
  DEFAULT_POLITENESS,
  type PageChunk,
  USER_AGENT,
  type WebsiteCrawlOptions,
} from './types.js';
