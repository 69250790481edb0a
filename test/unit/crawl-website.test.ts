// The website crawler against a small site served here over real HTTP on 127.0.0.1, with a second
// server on another port as another origin: what is stored and skipped and why, robots.txt and
// sitemaps, scope and selection options, chunks and their ids, politeness, abort, private addresses;
// and a third site for robots.txt's Crawl-delay and gzipped sitemaps.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HostPacer, MAX_HOST_DELAY_MS } from '../../server/crawl/pacer.js';
import {
  type CrawlEvent,
  type CrawlPoliteness,
  type CrawlSkip,
  type CrawledPage,
  crawlWebsite,
  type WebsiteCrawlOptions,
} from '../../server/crawl/website/index.js';
import { sitemapText } from '../../server/crawl/website/sitemap.js';
import { STRICT_OUTBOUND } from '../../server/engines/outbound.js';
import { localStandIns } from '../support/outbound.js';

interface Site {
  url: string;
  /** Requests received: path, user agent, arrival time. */
  received: { path: string; userAgent: string; at: number }[];
  close(): Promise<void>;
}

async function serve(route: (path: string, res: ServerResponse, req: IncomingMessage) => void): Promise<Site> {
  const received: Site['received'] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    received.push({ path, userAgent: req.headers['user-agent'] ?? '', at: Date.now() });
    route(path, res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const html = (res: ServerResponse, body: string, status = 200) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html>${body}</html>`);
};

let site: Site;
let other: Site;
let otherRobotsStatus = 404;
const slowTimers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  other = await serve((path, res) => {
    if (path === '/robots.txt') return void res.writeHead(otherRobotsStatus).end();
    html(res, '<title>Elsewhere</title><body><h1>Elsewhere</h1><p>Another origin</p></body>');
  });
  site = await serve((path, res) => {
    const A = site.url;
    switch (path) {
      case '/robots.txt':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end(`User-agent: *\nDisallow: /private\n\nSitemap: ${A}/sitemap-index.xml\n`);
      case '/sitemap.xml':
        res.writeHead(200, { 'content-type': 'application/xml' });
        return void res.end(
          `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${A}/only-in-sitemap</loc></url></urlset>`,
        );
      case '/sitemap-index.xml':
        res.writeHead(200, { 'content-type': 'application/xml' });
        return void res.end(`<sitemapindex><sitemap><loc>${A}/sitemap-more.xml</loc></sitemap></sitemapindex>`);
      case '/sitemap-more.xml':
        res.writeHead(200, { 'content-type': 'text/xml' });
        return void res.end(`<urlset><url><loc> ${A}/from-index </loc></url></urlset>`);
      case '/':
        return html(
          res,
          `<head><title>Home</title></head><body><nav>${[
            '/about',
            '/about#team',
            './about',
            '/private/secret',
            '/error',
            '/slow',
            '/file.png',
            '/old',
            '/again',
            `${other.url}/`,
            '/docs/a',
            '/docs/b',
            '/notes.txt',
            '/big',
            '/empty',
            'mailto:someone@example.com',
          ]
            .map((href) => `<a href="${href}">link</a>`)
            .join('')}</nav><h1>Welcome</h1><p>Intro text</p><h2>Details</h2><p>More text</p><script>evil()</script></body>`,
        );
      case '/about':
        return html(
          res,
          '<title>About</title><body><h1>About</h1><p>About us</p><div class="ad">Buy now</div><main><p>Main text</p></main><a href="/">home</a></body>',
        );
      case '/private/secret':
        return html(res, '<h1>Secret</h1><p>Never to be read</p>');
      case '/error':
        return html(res, '<h1>Error</h1>', 500);
      case '/slow': {
        const timer = setTimeout(() => html(res, '<h1>Slow</h1><p>At last</p>'), 3_000);
        slowTimers.add(timer);
        return;
      }
      case '/file.png':
        res.writeHead(200, { 'content-type': 'image/png' });
        return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      case '/old':
        return void res.writeHead(301, { location: '/moved' }).end();
      case '/again':
        return void res.writeHead(302, { location: '/about' }).end();
      case '/moved':
        return html(res, '<title>Moved</title><body><h1>Moved</h1><p>Found here now</p></body>');
      case '/docs/a':
        return html(
          res,
          '<title>Guide</title><body><h1>Guide ¶</h1><p>Intro</p><h2>Install ¶</h2><p>Get it</p><h3>Linux</h3><p>apt</p><h2>Use</h2><p>Run it TODO</p></body>',
        );
      case '/docs/b':
        return html(res, '<h1>B</h1><p>Second doc</p>');
      case '/notes.txt':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('line one\nline <two>\n');
      case '/big':
        // Written in parts without a length: the cap is found while reading.
        res.writeHead(200, { 'content-type': 'text/html' });
        for (let i = 0; i < 10; i++) res.write(`<p>${'x'.repeat(500)}</p>`);
        return void res.end();
      case '/empty':
        return html(res, '<body><script>only()</script></body>');
      case '/only-in-sitemap':
        return html(res, '<h1>Sitemap page</h1><p>Listed in the sitemap</p>');
      case '/from-index':
        return html(res, '<h1>Index page</h1><p>Listed in a sitemap index</p>');
      default:
        res.writeHead(404).end();
    }
  });
});

afterAll(async () => {
  for (const timer of slowTimers) clearTimeout(timer);
  await site.close();
  await other.close();
});

beforeEach(() => {
  site.received.length = 0;
  other.received.length = 0;
  otherRobotsStatus = 404;
});

const fast = { pageTimeoutMs: 500, maxPageBytes: 2048 };

async function crawl(options: Partial<WebsiteCrawlOptions> = {}, deps: Partial<Parameters<typeof crawlWebsite>[1]> = {}) {
  const events: CrawlEvent[] = [];
  for await (const event of crawlWebsite(
    { siteUrl: site.url + '/', limit: 100, ignoreSitemap: false, allowExternalLinks: false, ...options },
    { outbound: localStandIns, politeness: fast, ...deps },
  ))
    events.push(event);
  const pages = events.flatMap((e) => ('page' in e ? [e.page] : []));
  const skips = events.flatMap((e) => ('skipped' in e ? [e.skipped] : []));
  return { events, pages, skips, paths: (list: { url: string }[]) => list.map((p) => p.url.replace(site.url, '')) };
}

const reasonOf = (skips: CrawlSkip[], url: string) => skips.find((s) => s.url === url)?.reason;
const pageAt = (pages: CrawledPage[], url: string) => pages.find((p) => p.url === url);

describe('crawlWebsite', () => {
  it('stores the pages it reaches and says why each other page was skipped', async () => {
    const { pages, skips, paths } = await crawl();
    const A = site.url;
    // Breadth-first: the start page, the sitemaps' pages, then the links in page order.
    expect(paths(pages)).toEqual(['/', '/only-in-sitemap', '/from-index', '/about', '/moved', '/docs/a', '/docs/b', '/notes.txt']);
    expect(reasonOf(skips, `${A}/private/secret`)).toBe('disallowed by robots.txt');
    expect(reasonOf(skips, `${A}/error`)).toBe('status 500');
    expect(reasonOf(skips, `${A}/slow`)).toMatch(/no answer within 500 ms/);
    expect(reasonOf(skips, `${A}/file.png`)).toMatch(/content type \(image\/png\)/);
    expect(reasonOf(skips, `${A}/big`)).toBe('larger than 2048 bytes');
    expect(reasonOf(skips, `${A}/empty`)).toBe('no text content');
    expect(reasonOf(skips, `${A}/again`)).toBe(`redirected to ${A}/about, which the crawl visits already`);
    expect(skips).toHaveLength(7);

    const requested = site.received.map((r) => r.path);
    expect(requested).not.toContain('/private/secret');
    // A page linked three ways (one with a fragment) is fetched once for them, and once more
    // through the redirect to it, which is then not stored again; robots.txt is read once.
    expect(requested.filter((p) => p === '/about')).toHaveLength(2);
    expect(requested.filter((p) => p === '/robots.txt')).toHaveLength(1);
    expect(requested).toEqual(expect.arrayContaining(['/sitemap.xml', '/sitemap-index.xml', '/sitemap-more.xml', '/old', '/moved']));
    expect(site.received.every((r) => r.userAgent.startsWith('ChunkSearchCrawler/'))).toBe(true);
    expect(other.received).toEqual([]);

    expect(pageAt(pages, `${A}/`)?.title).toBe('Home');
    // Script and head are not content; nav text is part of the page.
    const home = pageAt(pages, `${A}/`)!
      .chunks.map((c) => c.html)
      .join('');
    expect(home).not.toContain('evil');
    expect(home).not.toContain('Home');
    expect(pageAt(pages, `${A}/notes.txt`)).toMatchObject({ title: null, chunks: [{ headings: [], html: '<p>line one</p><p>line &lt;two&gt;</p>' }] });
  });

  it('reads no sitemap when told to ignore it', async () => {
    const { paths, pages } = await crawl({ ignoreSitemap: true });
    expect(paths(pages)).not.toContain('/only-in-sitemap');
    expect(paths(pages)).not.toContain('/from-index');
    expect(site.received.map((r) => r.path)).not.toContain('/sitemap.xml');
  });

  it('stops after `limit` stored pages', async () => {
    const { pages, events } = await crawl({ limit: 2 });
    expect(pages).toHaveLength(2);
    expect(events.at(-1)).toHaveProperty('page');
    expect(site.received.map((r) => r.path)).not.toContain('/about');
  });

  it('follows links to another origin only when allowed, honouring its robots.txt', async () => {
    const allowed = await crawl({ allowExternalLinks: true, ignoreSitemap: true });
    expect(pageAt(allowed.pages, `${other.url}/`)).toMatchObject({ title: 'Elsewhere', chunks: [{ headings: ['Elsewhere'] }] });
    expect(other.received.map((r) => r.path)).toEqual(['/robots.txt', '/']);

    other.received.length = 0;
    otherRobotsStatus = 503;
    const unreadable = await crawl({ allowExternalLinks: true, ignoreSitemap: true });
    expect(reasonOf(unreadable.skips, `${other.url}/`)).toMatch(/robots\.txt could not be read \(status 503\)/);
    expect(other.received.map((r) => r.path)).toEqual(['/robots.txt']);
  });

  it('crawls only the paths includePaths and excludePaths let through', async () => {
    const { pages, skips, paths } = await crawl({ includePaths: ['^/docs/'], excludePaths: ['/b$'], ignoreSitemap: true });
    expect(paths(pages)).toEqual(['/docs/a']);
    // The start page is read for its links, not stored; other pages are not even requested.
    expect(reasonOf(skips, `${site.url}/`)).toBe('the path matches no includePaths');
    expect(skips).toHaveLength(1);
    expect(site.received.map((r) => r.path)).toEqual(['/robots.txt', '/', '/docs/a']);
  });

  it('keeps includeTags and drops excludeTags', async () => {
    const only = { siteUrl: `${site.url}/about`, includePaths: ['^/about$'], ignoreSitemap: true, limit: 1 };
    const included = await crawl({ ...only, includeTags: ['main'] });
    expect(included.pages[0].chunks.map((c) => c.html)).toEqual(['<p>Main text</p>']);
    const excluded = await crawl({ ...only, excludeTags: ['.ad', 'main'] });
    expect(excluded.pages[0].chunks).toMatchObject([{ headings: ['About'], html: '<h1>About</h1><p>About us</p><p>home</p>' }]);
    await expect(crawl({ ...only, includeTags: ['main['] })).rejects.toThrow(/includeTags/);
  });

  it('splits a page by heading, with heading paths and the strings to remove removed', async () => {
    const { pages } = await crawl({ siteUrl: `${site.url}/docs/a`, limit: 1, ignoreSitemap: true, headingRemoveStrings: ['¶'], bodyRemoveStrings: ['TODO'] });
    expect(pages[0].chunks.map(({ headings, html }) => ({ headings, html }))).toEqual([
      { headings: ['Guide'], html: '<h1>Guide</h1><p>Intro</p>' },
      { headings: ['Guide', 'Install'], html: '<h2>Install</h2><p>Get it</p>' },
      { headings: ['Guide', 'Install', 'Linux'], html: '<h3>Linux</h3><p>apt</p>' },
      { headings: ['Guide', 'Use'], html: '<h2>Use</h2><p>Run it</p>' },
    ]);
  });

  it('gives chunks tracking ids that a re-crawl repeats and that differ by page and position', async () => {
    const ids = async () => (await crawl({ ignoreSitemap: true })).pages.flatMap((p) => p.chunks.map((c) => c.trackingId));
    const first = await ids();
    expect(await ids()).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
    expect(first.length).toBeGreaterThan(5);
  });

  it('refuses a private address unless the operator allows it', async () => {
    const { pages, skips } = await crawl({ ignoreSitemap: true }, { outbound: STRICT_OUTBOUND });
    expect(pages).toEqual([]);
    expect(skips).toHaveLength(1);
    expect(skips[0].reason).toMatch(/refused: .*loopback address/);
    expect(site.received).toEqual([]);
  });

  it('waits minDelayMs between two requests to one host', async () => {
    // Two pages, so no redirect: its hop is followed at once, as part of the same request.
    await crawl({ ignoreSitemap: true, limit: 2 }, { politeness: { ...fast, minDelayMs: 150 } });
    const times = site.received.map((r) => r.at);
    expect(site.received.map((r) => r.path)).toEqual(['/robots.txt', '/', '/about']);
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(140);
  });

  it('stops promptly when aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stopped by the test')), 200);
    const began = Date.now();
    await expect(
      crawl({ siteUrl: `${site.url}/slow`, ignoreSitemap: true }, { signal: controller.signal, politeness: { pageTimeoutMs: 10_000 } }),
    ).rejects.toThrow('stopped by the test');
    expect(Date.now() - began).toBeLessThan(1_500);
  });
});

describe('crawlWebsite politeness and gzipped sitemaps', () => {
  let polite: Site;
  let robots = '';

  beforeAll(async () => {
    polite = await serve((path, res) => {
      const P = polite.url;
      const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`;
      const urlset = (...paths: string[]) => xml(`<urlset>${paths.map((p) => `<url><loc>${P}${p}</loc></url>`).join('')}</urlset>`);
      const index = (...paths: string[]) => xml(`<sitemapindex>${paths.map((p) => `<sitemap><loc>${P}${p}</loc></sitemap>`).join('')}</sitemapindex>`);
      const gz = (type: string, text: string) => void res.writeHead(200, { 'content-type': type }).end(gzipSync(text));
      switch (path) {
        case '/robots.txt':
          return void res.writeHead(200, { 'content-type': 'text/plain' }).end(robots);
        case '/':
          return html(res, '<h1>Start</h1><p>Begin</p><a href="/a">a</a><a href="/b">b</a>');
        case '/index.xml':
          return void res
            .writeHead(200, { 'content-type': 'application/xml' })
            .end(index('/pages.xml.gz', '/bomb.xml.gz', '/encoded.xml', '/nested.xml.gz', '/broken.xml.gz'));
        case '/pages.xml.gz':
          return gz('application/x-gzip', urlset('/from-gz'));
        case '/nested.xml.gz':
          return gz('application/gzip', index('/deeper.xml.gz'));
        case '/deeper.xml.gz':
          return gz('application/octet-stream', urlset('/from-deeper'));
        case '/bomb.xml.gz':
          // A few hundred bytes on the wire, far more than the size bound once unpacked.
          return gz('application/gzip', urlset('/from-bomb') + ' '.repeat(1_000_000));
        case '/broken.xml.gz':
          return void res.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(urlset('/from-broken')).subarray(0, 30));
        case '/encoded.xml':
          // Compressed for the transfer only: the HTTP client unpacks it.
          return void res.writeHead(200, { 'content-type': 'application/xml', 'content-encoding': 'gzip' }).end(gzipSync(urlset('/from-encoded')));
        case '/a':
        case '/b':
        case '/from-gz':
        case '/from-deeper':
        case '/from-encoded':
        case '/from-bomb':
        case '/from-broken':
          return html(res, `<h1>${path}</h1><p>Text of ${path}</p>`);
        default:
          res.writeHead(404).end();
      }
    });
  });
  afterAll(() => polite.close());
  beforeEach(() => {
    polite.received.length = 0;
  });

  async function politeCrawl(politeness: Partial<CrawlPoliteness>, options: Partial<WebsiteCrawlOptions> = {}) {
    const events: CrawlEvent[] = [];
    for await (const event of crawlWebsite(
      { siteUrl: `${polite.url}/`, limit: 2, ignoreSitemap: true, allowExternalLinks: false, ...options },
      { outbound: localStandIns, politeness: { ...fast, ...politeness } },
    ))
      events.push(event);
    return events.flatMap((e) => ('page' in e ? [e.page.url.replace(polite.url, '')] : []));
  }

  /** The gaps between the requests the site received, in order, in ms. */
  const gaps = () => polite.received.slice(1).map((r, i) => r.at - polite.received[i].at);

  it("waits robots.txt's Crawl-delay for our user agent between requests", async () => {
    // The group for every other crawler forbids everything: only ours lets the crawl in.
    robots = 'User-agent: *\nDisallow: /\n\nUser-agent: ChunkSearchCrawler\nAllow: /\nCrawl-delay: 0.8\n';
    const began = Date.now();
    expect(await politeCrawl({ minDelayMs: 0 })).toEqual(['/', '/a']);
    expect(polite.received.map((r) => r.path)).toEqual(['/robots.txt', '/', '/a']);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(780);
    expect(Date.now() - began).toBeLessThan(10_000);
  });

  it('waits the larger of the Crawl-delay and the crawl’s own delay', async () => {
    robots = 'User-agent: *\nCrawl-delay: 0.1\n';
    expect(await politeCrawl({ minDelayMs: 500 })).toEqual(['/', '/a']);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(480);

    polite.received.length = 0;
    robots = 'User-agent: *\nCrawl-delay: 0.5\n';
    expect(await politeCrawl({ minDelayMs: 100 })).toEqual(['/', '/a']);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(480);

    polite.received.length = 0;
    robots = 'User-agent: *\nCrawl-delay: soon\n';
    const began = Date.now();
    expect(await politeCrawl({ minDelayMs: 0 })).toEqual(['/', '/a']);
    expect(Date.now() - began).toBeLessThan(1_000);
  });

  it('takes a Crawl-delay longer than its bound as the bound', () => {
    const pacer = new HostPacer(200);
    expect(pacer.delayOf('example.com')).toBe(200);
    pacer.askedDelay('example.com', 3_600_000);
    expect(pacer.delayOf('example.com')).toBe(MAX_HOST_DELAY_MS);
    expect(pacer.delayOf('example.com:8080')).toBe(200);
    pacer.askedDelay('example.org', Number.NaN);
    expect(pacer.delayOf('example.org')).toBe(200);
  });

  it('reads gzipped sitemaps and sitemap indexes, within the size bound, and sitemaps sent gzip-encoded', async () => {
    robots = `User-agent: *\nAllow: /\nSitemap: ${polite.url}/index.xml\n`;
    const pages = await politeCrawl({ minDelayMs: 0 }, { ignoreSitemap: false, limit: 100 });
    expect(pages).toEqual(['/', '/from-gz', '/from-encoded', '/from-deeper', '/a', '/b']);
    const requested = polite.received.map((r) => r.path);
    // The bomb and the truncated file were read, and gave nothing.
    expect(requested).toEqual(expect.arrayContaining(['/bomb.xml.gz', '/broken.xml.gz', '/nested.xml.gz', '/deeper.xml.gz']));
    expect(requested).not.toContain('/from-bomb');
    expect(requested).not.toContain('/from-broken');
  });

  it('unpacks a sitemap only when it is gzip, by its first bytes', async () => {
    const text = '<urlset><url><loc>https://example.com/x</loc></url></urlset>';
    expect(await sitemapText(gzipSync(text), 'application/gzip', 1000)).toBe(text);
    expect(await sitemapText(Buffer.from(text), 'application/gzip', 1000)).toBe(text);
    expect(await sitemapText(gzipSync(text), '', text.length - 1)).toBeNull();
  });
});
