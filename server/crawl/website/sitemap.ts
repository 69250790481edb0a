// Start URLs from sitemaps: /sitemap.xml and those robots.txt names, following sitemap indexes.
// A sitemap may be gzipped (`sitemap.xml.gz`, served as is rather than with a Content-Encoding):
// it is recognised by its first bytes, whatever its name or type, and unpacked under the same size
// bound as any answer.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { getElementsByTagName, textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';
import { decodeText } from '../body.js';
import type { PoliteFetcher } from './fetcher.js';
import type { SiteRules } from './robots.js';
import { normaliseUrl } from './urls.js';

/** Sitemap files read at most, indexes included: a site's sitemaps rarely need more, a hostile one could name thousands. */
export const MAX_SITEMAPS = 50;

const gunzipAsync = promisify(gunzip);

/** The page URLs the sitemaps list, in their order; an unreadable sitemap gives none. */
export async function sitemapPages(fetcher: PoliteFetcher, origin: string, rules: SiteRules): Promise<string[]> {
  const pending = [`${origin}/sitemap.xml`, ...rules.sitemaps].flatMap((u) => normaliseUrl(u) ?? []);
  const read = new Set<string>();
  const pages: string[] = [];
  while (pending.length && read.size < MAX_SITEMAPS) {
    const url = pending.shift()!;
    if (read.has(url)) continue;
    read.add(url);
    if (rules.refusal(url)) continue;
    const fetched = await fetcher.getBytes(url);
    if (fetched.kind !== 'bytes') continue;
    const xml = await sitemapText(fetched.bytes, fetched.header, fetcher.maxBytes);
    if (xml === null) continue;
    const { sitemaps, locations } = parseSitemap(xml, fetched.url);
    pending.push(...sitemaps);
    pages.push(...locations);
  }
  return pages;
}

/** The sitemap's text, gunzipped when it is gzip; null when it unpacks to more than `maxBytes` or is broken. */
export async function sitemapText(bytes: Uint8Array, contentType: string, maxBytes: number): Promise<string | null> {
  if (!isGzip(bytes)) return decodeText(bytes, contentType);
  try {
    // XML names its own encoding; sitemaps must be UTF-8.
    return decodeText(await gunzipAsync(bytes, { maxOutputLength: maxBytes }), '');
  } catch {
    return null;
  }
}

/** gzip's magic number (RFC 1952). */
const isGzip = (bytes: Uint8Array) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;

/** A <urlset>'s page URLs, or a <sitemapindex>'s sitemaps. */
export function parseSitemap(xml: string, base: string): { sitemaps: string[]; locations: string[] } {
  const sitemaps: string[] = [];
  const locations: string[] = [];
  for (const loc of getElementsByTagName('loc', parseDocument(xml, { xmlMode: true }))) {
    const url = normaliseUrl(textContent(loc).trim(), base);
    const parent = loc.parent && 'name' in loc.parent ? loc.parent.name : null;
    if (url && parent === 'sitemap') sitemaps.push(url);
    else if (url && parent === 'url') locations.push(url);
  }
  return { sitemaps, locations };
}
