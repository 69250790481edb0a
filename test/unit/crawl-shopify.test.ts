// The Shopify crawl source against a Shopify-shaped store served here over real HTTP on 127.0.0.1:
// products and their chunks (per variant and per product), prices, tags and tag patterns, images,
// tracking ids, the limit, listing pages that fail, private addresses, abort.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { crawlShopify, type ShopifyCrawlOptions } from '../../server/crawl/shopify/index.js';
import type { SourceEvent, SourcePage } from '../../server/crawl/types.js';
import { STRICT_OUTBOUND } from '../../server/engines/outbound.js';
import { localStandIns } from '../support/outbound.js';

const PAGE_1 = [
  {
    id: 1001,
    title: 'Trail Shoe',
    handle: 'trail-shoe',
    body_html: '<p>Grippy <strong>outsole</strong>.</p>',
    vendor: 'Acme',
    product_type: 'Shoes',
    tags: ['running', 'outdoor', 'sale-2024'],
    variants: [
      { id: 2001, product_id: 1001, title: 'Small', price: '89.50', featured_image: null },
      { id: 2002, product_id: 1001, title: 'Large', price: '99.00', featured_image: { src: 'https://cdn.example/shoe-large.jpg' } },
    ],
    images: [
      { src: 'https://cdn.example/shoe.jpg', variant_ids: [] },
      { src: 'https://cdn.example/shoe-small.jpg', variant_ids: [2001] },
      { src: 'https://cdn.example/shoe-large.jpg', variant_ids: [2002] },
    ],
  },
  {
    id: 1002,
    title: 'Mug & Saucer',
    handle: 'mug',
    body_html: '<div>Stoneware</div>',
    tags: 'kitchen, gift ,  ',
    variants: [{ id: 2003, product_id: 1002, title: 'Default Title', price: '12' }],
    images: [{ src: 'https://cdn.example/mug.jpg' }],
  },
];
const PAGE_2 = [
  {
    id: 1003,
    title: 'Tent',
    handle: 'tent',
    body_html: null,
    tags: [],
    variants: [
      { id: 2004, product_id: 1003, title: '2 person', price: 'n/a' },
      { id: 2005, product_id: 1003, title: '4 person', price: '310.25' },
      { id: 2006, product_id: 1003, title: '6 person', price: '420' },
    ],
    images: [],
  },
];

interface Store {
  url: string;
  paths: string[];
  close(): Promise<void>;
}

async function serve(route: (path: string, res: ServerResponse) => void): Promise<Store> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '/');
    route(req.url ?? '/', res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** The listing page asked for, or null when the path is not a listing request of 250. */
function listingPage(path: string, prefix = ''): number | null {
  const url = new URL(path, 'http://x');
  if (url.pathname !== `${prefix}/products.json` || url.searchParams.get('limit') !== '250') return null;
  return Number(url.searchParams.get('page'));
}

let shop: Store;
let broken: Store;
let brokenPage2: 'status' | 'not-json' | 'no-products' | 'repeat' | 'odd' = 'status';

beforeAll(async () => {
  shop = await serve((path, res) => {
    const page = listingPage(path);
    if (page === null) return void res.writeHead(404).end();
    json(res, { products: page === 1 ? PAGE_1 : page === 2 ? PAGE_2 : [] });
  });
  broken = await serve((path, res) => {
    const page = listingPage(path, '/shop');
    if (page === 1) return json(res, { products: PAGE_1 });
    if (brokenPage2 === 'status') return void res.writeHead(500).end('oops');
    if (brokenPage2 === 'repeat') return json(res, { products: PAGE_1 });
    if (brokenPage2 === 'odd')
      return json(res, { products: page === 2 ? [null, { title: 'No id', handle: 'no-id' }, { id: 9, handle: 'bare', variants: [] }, ...PAGE_2] : [] });
    if (brokenPage2 === 'not-json') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
    json(res, { items: [] });
  });
});
afterAll(async () => {
  await shop?.close();
  await broken?.close();
});
beforeEach(() => {
  shop.paths.length = 0;
  broken.paths.length = 0;
});

async function collect(options: Partial<ShopifyCrawlOptions> & { storeUrl: string }, deps = { outbound: localStandIns }): Promise<SourceEvent[]> {
  const events: SourceEvent[] = [];
  for await (const event of crawlShopify({ limit: 100, groupVariants: true, ...options }, deps)) events.push(event);
  return events;
}

const pagesOf = (events: SourceEvent[]): SourcePage[] => events.flatMap((e) => ('page' in e ? [e.page] : []));
const skipsOf = (events: SourceEvent[]) => events.flatMap((e) => ('skipped' in e ? [e.skipped] : []));

describe('crawlShopify', () => {
  it('reads every listing page until an empty one, a page per product, a chunk per variant', async () => {
    const events = await collect({ storeUrl: `${shop.url}/` });
    expect(shop.paths).toEqual(['/products.json?limit=250&page=1', '/products.json?limit=250&page=2', '/products.json?limit=250&page=3']);
    expect(skipsOf(events)).toEqual([]);
    const pages = pagesOf(events);
    expect(pages.map((p) => [p.url, p.title, p.chunks.length])).toEqual([
      [`${shop.url}/products/trail-shoe`, 'Trail Shoe', 2],
      [`${shop.url}/products/mug`, 'Mug & Saucer', 1],
      [`${shop.url}/products/tent`, 'Tent', 3],
    ]);
    const [shoe, mug, tent] = pages;
    expect(shoe.chunks.map((c) => c.headings)).toEqual([
      ['Trail Shoe', 'Small'],
      ['Trail Shoe', 'Large'],
    ]);
    expect(shoe.chunks[1].html).toBe('<h1>Trail Shoe - Large</h1><p>Grippy <strong>outsole</strong>.</p>');
    // A product without options: its only variant's "Default Title" adds nothing; the title is escaped.
    expect(mug.chunks[0].headings).toEqual(['Mug & Saucer']);
    expect(mug.chunks[0].html).toBe('<h1>Mug &amp; Saucer</h1><div>Stoneware</div>');
    expect(tent.chunks[0].html).toBe('<h1>Tent - 2 person</h1>');
    // Each variant's own price; one that is not a number is none.
    expect(pages.flatMap((p) => p.chunks.map((c) => c.numValue))).toEqual([89.5, 99, 12, null, 310.25, 420]);
  });

  it('makes one chunk per product, from its first variant, without groupVariants', async () => {
    const pages = pagesOf(await collect({ storeUrl: shop.url, groupVariants: false }));
    expect(pages.map((p) => p.chunks.length)).toEqual([1, 1, 1]);
    expect(pages.map((p) => p.chunks[0].trackingId)).toEqual(['1001', '1002', '1003']);
    expect(pages.map((p) => p.chunks[0].numValue)).toEqual([89.5, 12, null]);
    expect(pages[0].chunks[0].imageUrls).toEqual(['https://cdn.example/shoe.jpg', 'https://cdn.example/shoe-small.jpg', 'https://cdn.example/shoe-large.jpg']);
  });

  it('gives stable, distinct tracking ids', async () => {
    const ids = (events: SourceEvent[]) => pagesOf(events).flatMap((p) => p.chunks.map((c) => c.trackingId));
    const first = ids(await collect({ storeUrl: shop.url }));
    const second = ids(await collect({ storeUrl: shop.url }));
    expect(first).toEqual(['2001', '2002', '2003', '2004', '2005', '2006']);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
  });

  it('keeps tags given as a list or as a comma-separated string', async () => {
    const [shoe, mug, tent] = pagesOf(await collect({ storeUrl: shop.url }));
    expect(shoe.chunks.map((c) => c.tags)).toEqual([
      ['running', 'outdoor', 'sale-2024'],
      ['running', 'outdoor', 'sale-2024'],
    ]);
    expect(mug.chunks[0].tags).toEqual(['kitchen', 'gift']);
    expect(tent.chunks[0].tags).toEqual([]);
  });

  it('adds the tag patterns a product matches to its chunks, keeping every tag', async () => {
    const [shoe, mug, tent] = pagesOf(await collect({ storeUrl: shop.url, tagRegexes: ['^sale-\\d+$', 'gift|present', 'outdoor', '([unclosed'] }));
    expect(shoe.chunks[0].tags).toEqual(['running', 'outdoor', 'sale-2024']);
    expect(shoe.chunks[0].html).toBe(
      '<div><h1>Trail Shoe - Small</h1><p>Grippy <strong>outsole</strong>.</p></div>\n\n<div><span>^sale-\\d+$</span><span>outdoor</span></div>',
    );
    expect(mug.chunks[0].html).toBe('<div><h1>Mug &amp; Saucer</h1><div>Stoneware</div></div>\n\n<div><span>gift|present</span></div>');
    expect(tent.chunks[0].html).toBe('<div><h1>Tent - 2 person</h1></div>\n\n<div></div>');
  });

  it("lists a variant's own image first", async () => {
    const [shoe, mug, tent] = pagesOf(await collect({ storeUrl: shop.url }));
    expect(shoe.chunks[0].imageUrls).toEqual(['https://cdn.example/shoe-small.jpg', 'https://cdn.example/shoe.jpg', 'https://cdn.example/shoe-large.jpg']);
    expect(shoe.chunks[1].imageUrls).toEqual(['https://cdn.example/shoe-large.jpg', 'https://cdn.example/shoe.jpg', 'https://cdn.example/shoe-small.jpg']);
    expect(mug.chunks[0].imageUrls).toEqual(['https://cdn.example/mug.jpg']);
    expect(tent.chunks[0].imageUrls).toEqual([]);
  });

  it('stops after limit products, asking for no more pages', async () => {
    const one = pagesOf(await collect({ storeUrl: shop.url, limit: 1 }));
    expect(one.map((p) => p.title)).toEqual(['Trail Shoe']);
    expect(shop.paths).toEqual(['/products.json?limit=250&page=1']);
    const three = pagesOf(await collect({ storeUrl: shop.url, limit: 3 }));
    expect(three.map((p) => p.title)).toEqual(['Trail Shoe', 'Mug & Saucer', 'Tent']);
    expect(pagesOf(await collect({ storeUrl: shop.url, limit: 0 }))).toEqual([]);
  });

  it.each([
    ['status', 'status 500'],
    ['not-json', 'the answer is not JSON'],
    ['no-products', 'the answer is not a Shopify product listing (no "products" list)'],
  ] as const)('reports a listing page that fails (%s) as skipped and stops', async (kind, reason) => {
    brokenPage2 = kind;
    const events = await collect({ storeUrl: `${broken.url}/shop?x=1` });
    expect(pagesOf(events).map((p) => p.url)).toEqual([`${broken.url}/shop/products/trail-shoe`, `${broken.url}/shop/products/mug`]);
    expect(skipsOf(events)).toEqual([{ url: `${broken.url}/shop/products.json?limit=250&page=2`, reason }]);
    expect(broken.paths).toHaveLength(2);
  });

  it('ends when a store repeats a page instead of ending', async () => {
    brokenPage2 = 'repeat';
    const pages = pagesOf(await collect({ storeUrl: `${broken.url}/shop` }));
    expect(pages.map((p) => p.title)).toEqual(['Trail Shoe', 'Mug & Saucer']);
    expect(broken.paths).toHaveLength(2);
  });

  it('skips a product it cannot use and goes on', async () => {
    brokenPage2 = 'odd';
    const events = await collect({ storeUrl: `${broken.url}/shop` });
    expect(pagesOf(events).map((p) => p.title)).toEqual(['Trail Shoe', 'Mug & Saucer', 'Tent']);
    expect(skipsOf(events)).toEqual([
      { url: `${broken.url}/shop/products.json?limit=250&page=2`, reason: 'a product that is not an object' },
      { url: `${broken.url}/shop/products/no-id`, reason: 'a product without a valid id' },
      { url: `${broken.url}/shop/products/bare`, reason: 'the product has no variants' },
    ]);
    expect(broken.paths).toHaveLength(3);
  });

  it('refuses a private address unless allowed', async () => {
    const events = await collect({ storeUrl: shop.url }, { outbound: STRICT_OUTBOUND });
    expect(pagesOf(events)).toEqual([]);
    const skips = skipsOf(events);
    expect(skips).toHaveLength(1);
    expect(skips[0].url).toBe(`${shop.url}/products.json?limit=250&page=1`);
    expect(skips[0].reason).toMatch(/^refused: /);
    expect(shop.paths).toEqual([]);
  });

  it('throws the reason when aborted, and refuses a store URL that is not http(s)', async () => {
    const controller = new AbortController();
    const events: SourceEvent[] = [];
    await expect(
      (async () => {
        for await (const event of crawlShopify(
          { storeUrl: shop.url, limit: 100, groupVariants: true },
          { outbound: localStandIns, signal: controller.signal },
        )) {
          events.push(event);
          controller.abort(new Error('stopped by the test'));
        }
      })(),
    ).rejects.toThrow('stopped by the test');
    expect(events).toHaveLength(1);
    await expect(collect({ storeUrl: 'ftp://shop.example' })).rejects.toThrow(TypeError);
  });
});
