// A Shopify store as a crawl source: its public product listing, `/products.json`, read page by
// page (250 products a page, from page 1) until a page comes back empty or `limit` products are
// taken; every product a page of chunks (see products.ts for how, after Trieve 0.13.0). Every
// request goes through outboundFetch, so private addresses stay refused unless allowed. A listing
// page that fails (no answer, a non-2xx status, not JSON, not a listing) is reported as skipped
// with the reason, and the crawl stops there: the pages after it cannot be trusted to exist.
import { OutboundRefusedError, type OutboundResponse, type OutboundSettings, outboundFetch } from '../../engines/outbound.js';
import { boundedText } from '../body.js';
import type { SourceEvent } from '../types.js';
import { USER_AGENT } from '../website/types.js';
import { compileTagPatterns, productPage, productUrl, readListing } from './products.js';

export interface ShopifyCrawlOptions {
  /** The store's address, e.g. https://shop.example.com (a path is kept, a query dropped). */
  storeUrl: string;
  /** The most products taken. */
  limit: number;
  /** A chunk per variant (Trieve's default), else one per product. */
  groupVariants: boolean;
  /** Patterns whose text is added to a product's chunks when one of its tags matches. */
  tagRegexes?: string[];
}

export interface ShopifyCrawlDeps {
  outbound: OutboundSettings;
  /** Stops the crawl: the iteration throws the signal's reason. */
  signal?: AbortSignal;
}

/** The most products Shopify gives a page. */
export const PAGE_SIZE = 250;
const TIMEOUT_MS = 30_000;
/** 250 products with long descriptions stay well under this. */
const MAX_LISTING_BYTES = 32 * 1024 * 1024;

export async function* crawlShopify(options: ShopifyCrawlOptions, deps: ShopifyCrawlDeps): AsyncGenerator<SourceEvent> {
  const store = storeBase(options.storeUrl);
  const productOptions = {
    store,
    groupVariants: options.groupVariants,
    tagPatterns: options.tagRegexes ? compileTagPatterns(options.tagRegexes) : undefined,
  };
  const limit = Number.isFinite(options.limit) ? Math.max(0, Math.floor(options.limit)) : 0;
  // A store whose pages repeat (page-based paging is not promised to be stable) yields each product once.
  const seen = new Set<string>();
  let taken = 0;
  for (let page = 1; taken < limit; page++) {
    deps.signal?.throwIfAborted();
    const url = `${store}/products.json?limit=${PAGE_SIZE}&page=${page}`;
    const fetched = await fetchListing(url, deps);
    if ('error' in fetched) {
      yield { skipped: { url, reason: fetched.error } };
      return;
    }
    const listing = readListing(fetched.text);
    if ('error' in listing) {
      yield { skipped: { url, reason: listing.error } };
      return;
    }
    if (listing.products.length === 0) return;
    let fresh = 0;
    for (const product of listing.products) {
      if (taken >= limit) return;
      deps.signal?.throwIfAborted();
      if ('invalid' in product) {
        fresh++;
        yield { skipped: { url: product.handle ? productUrl(store, product.handle) : url, reason: product.invalid } };
        continue;
      }
      if (seen.has(product.id)) continue;
      seen.add(product.id);
      fresh++;
      const made = productPage(product, productOptions);
      if ('reason' in made) {
        yield { skipped: { url: productUrl(store, product.handle), reason: made.reason } };
        continue;
      }
      taken++;
      yield { page: made };
    }
    // Nothing new on a non-empty page: the store repeats itself rather than ending.
    if (fresh === 0) return;
  }
}

/** `<origin><path>` without a trailing slash; throws on anything but an http(s) URL. */
function storeBase(storeUrl: string): string {
  let url: URL;
  try {
    url = new URL(storeUrl.trim());
  } catch {
    throw new TypeError('storeUrl: not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('storeUrl: not an http or https URL');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The listing page's text, or why there is none. Throws only when the crawl is aborted. */
async function fetchListing(url: string, deps: ShopifyCrawlDeps): Promise<{ text: string } | { error: string }> {
  let response: OutboundResponse;
  try {
    response = await outboundFetch(deps.outbound, url, {
      headers: { 'user-agent': USER_AGENT, accept: 'application/json' },
      timeoutMs: TIMEOUT_MS,
      signal: deps.signal,
    });
  } catch (error) {
    deps.signal?.throwIfAborted();
    if (error instanceof OutboundRefusedError) return { error: `refused: ${error.message}` };
    return { error: (error as Error).message || 'the connection failed' };
  }
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel();
    return { error: `status ${response.status}` };
  }
  try {
    const text = await boundedText(response, MAX_LISTING_BYTES);
    if (text === null) return { error: `larger than ${MAX_LISTING_BYTES} bytes` };
    return { text };
  } catch (error) {
    deps.signal?.throwIfAborted();
    return { error: (error as Error).message || 'the answer was cut short' };
  }
}
