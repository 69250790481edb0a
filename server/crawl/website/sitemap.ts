// Start URLs from sitemaps: /sitemap.xml and those robots.txt names, following sitemap indexes.
import { getElementsByTagName, textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';
import type { PoliteFetcher } from './fetcher.js';
import type { SiteRules } from './robots.js';
import { normaliseUrl } from './urls.js';

/** Sitemap files read at most, indexes included: a site's sitemaps rarely need more, a hostile one could name thousands. */
export const MAX_SITEMAPS = 50;

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
    const fetched = await fetcher.get(url);
    if (fetched.kind !== 'body') continue;
    const { sitemaps, locations } = parseSitemap(fetched.text, fetched.url);
    pending.push(...sitemaps);
    pages.push(...locations);
  }
  return pages;
}

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
