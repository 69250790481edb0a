// The source a crawl reads, by its kind: a website (firecrawl, the reference's name for it), a
// Shopify store's product listing, an OpenAPI document, or a YouTube channel's videos. Each yields
// pages with their chunks.
import type * as T from '../../sdk/src/generated/types.gen.js';
import type { OutboundSettings } from '../engines/outbound.js';
import { crawlOpenApi } from './openapi/index.js';
import { crawlShopify } from './shopify/index.js';
import type { SourceEvent } from './types.js';
import { type CrawlPoliteness, crawlWebsite } from './website/index.js';
import { crawlYoutube } from './youtube/index.js';

/** Pages a crawl stores when its options do not say. */
export const DEFAULT_PAGE_LIMIT = 1000;

export interface SourceDeps {
  outbound: OutboundSettings;
  signal?: AbortSignal;
  /** The instance's pace of requests to a site (CRAWL_REQUESTS_PER_SECOND). */
  politeness?: Pick<CrawlPoliteness, 'minDelayMs'>;
}

export function crawlSource(options: T.CrawlOptions, deps: SourceDeps): AsyncIterable<SourceEvent> {
  const limit = options.limit ?? DEFAULT_PAGE_LIMIT;
  const siteUrl = options.site_url!;
  const scrape = options.scrape_options;
  if (scrape?.type === 'shopify')
    return crawlShopify({ storeUrl: siteUrl, limit, groupVariants: scrape.group_variants ?? true, tagRegexes: scrape.tag_regexes ?? undefined }, deps);
  if (scrape?.type === 'openapi') return crawlOpenApi({ specUrl: scrape.openapi_schema_url, docsUrl: siteUrl, tag: scrape.openapi_tag, limit }, deps);
  if (scrape?.type === 'youtube') return crawlYoutube({ channelUrl: siteUrl, limit }, deps);
  return crawlWebsite(
    {
      siteUrl,
      limit,
      ignoreSitemap: options.ignore_sitemap ?? false,
      allowExternalLinks: options.allow_external_links ?? false,
      includePaths: options.include_paths ?? undefined,
      excludePaths: options.exclude_paths ?? undefined,
      includeTags: options.include_tags ?? undefined,
      excludeTags: options.exclude_tags ?? undefined,
      headingRemoveStrings: options.heading_remove_strings ?? undefined,
      bodyRemoveStrings: options.body_remove_strings ?? undefined,
    },
    deps,
  );
}
