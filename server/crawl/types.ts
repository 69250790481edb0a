// What a crawl source (a website, a Shopify store, an OpenAPI document, a YouTube channel) hands
// the crawl: pages, each with its chunks, or pages skipped with the reason.

export interface SourceChunk {
  /** Stable across crawls of the same source, so a re-crawl updates the chunk in place. */
  trackingId: string;
  html: string;
  /** The heading path above the chunk, outermost first. */
  headings: string[];
  /** A number to filter and sort by (a product's price). */
  numValue?: number | null;
  /** Tags of the chunk, added to the crawl's own. */
  tags?: string[];
  imageUrls?: string[];
  /** Where the chunk links to, when not its page (a video at the second the chunk starts). */
  link?: string;
  /** The chunk's date and time (ISO 8601): a video's publication. */
  timeStamp?: string;
  /** Added to the chunk's metadata, beside its page's URL, title and headings. */
  metadata?: Record<string, unknown>;
}

export interface SourcePage {
  url: string;
  title: string | null;
  chunks: SourceChunk[];
}

export type SourceEvent = { page: SourcePage } | { skipped: { url: string; reason: string } };
