// One spelling per page, so that a page linked in several ways is fetched once.

/** The URL without its fragment, or null when it is not an http(s) URL. */
export function normaliseUrl(href: string, base?: string): string | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // URL already lowercases the scheme and host, drops default ports and resolves dot segments.
  url.hash = '';
  if (!url.search) url.search = ''; // `/a?` and `/a` are one page
  return url.href;
}
