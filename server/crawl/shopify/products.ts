// A Shopify store's public product listing (`/products.json`) read defensively, and a product
// turned into a page of chunks the way Trieve 0.13.0's crawl worker does it:
//
// - With groupVariants (the default) every variant is a chunk, its tracking id the variant's id;
//   Trieve puts them in a group whose tracking id is the product's id (here: the product's page).
//   Without it a product is one chunk, its tracking id the product's id, made from the first
//   variant (Trieve sends every variant under that one id, so only one of them is kept).
// - The chunk's HTML is `<h1>product title - variant title</h1>` and the product's body_html; a
//   variant titled "Default Title" (a product without options) adds nothing to the heading.
// - num_value is the variant's price; tags are the product's tags, all of them. tag_regexes do
//   not filter tags: the patterns some tag matches are appended to the HTML as `<span>`s, so a
//   search for the pattern's text finds the product.
// - Image URLs are the product's images (a variant's own image first).
//
// Shopify's ids are unique across every store, so they are stable, distinct tracking ids as they
// are, the ones Trieve's clients (product recommendations, the Shopify app) look chunks up by.
import type { SourceChunk, SourcePage } from '../types.js';

/** The title Shopify gives the only variant of a product that has no options. */
const DEFAULT_VARIANT_TITLE = 'Default Title';

export interface ProductOptions {
  /** The store's URL without a trailing slash: pages are `<store>/products/<handle>`. */
  store: string;
  groupVariants: boolean;
  /** Compiled tag patterns with their source text; undefined: none given. */
  tagPatterns?: TagPattern[];
}

export interface TagPattern {
  source: string;
  regex: RegExp;
}

interface Variant {
  id: string;
  title: string;
  price: number | null;
  imageSrc: string | null;
}

interface Image {
  src: string;
  variantIds: string[];
}

export interface Product {
  id: string;
  handle: string;
  title: string;
  bodyHtml: string;
  tags: string[];
  variants: Variant[];
  images: Image[];
}

/** The products of a listing page, or why the answer is not one. Each entry is a product or why it is unusable. */
export function readListing(text: string): { products: (Product | { invalid: string; handle: string | null })[] } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { error: 'the answer is not JSON' };
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.products)) return { error: 'the answer is not a Shopify product listing (no "products" list)' };
  return { products: parsed.products.map(readProduct) };
}

function readProduct(value: unknown): Product | { invalid: string; handle: string | null } {
  if (!isRecord(value)) return { invalid: 'a product that is not an object', handle: null };
  const handle = typeof value.handle === 'string' && value.handle.trim() ? value.handle.trim() : null;
  const id = readId(value.id);
  if (!id) return { invalid: 'a product without a valid id', handle };
  if (!handle) return { invalid: `product ${id} has no handle`, handle };
  const variants = (Array.isArray(value.variants) ? value.variants : []).flatMap((v) => {
    if (!isRecord(v)) return [];
    const variantId = readId(v.id);
    if (!variantId) return [];
    const image = isRecord(v.featured_image) ? text(v.featured_image.src) : '';
    return [{ id: variantId, title: text(v.title).trim(), price: readPrice(v.price), imageSrc: image || null }];
  });
  const images = (Array.isArray(value.images) ? value.images : []).flatMap((i) => {
    if (!isRecord(i) || !text(i.src)) return [];
    const variantIds = Array.isArray(i.variant_ids) ? i.variant_ids.map(readId).filter((x): x is string => x !== null) : [];
    return [{ src: text(i.src), variantIds }];
  });
  return { id, handle, title: text(value.title).trim(), bodyHtml: text(value.body_html), tags: readTags(value.tags), variants, images };
}

/** The product's page with its chunks, or why it has none. */
export function productPage(product: Product, options: ProductOptions): SourcePage | { reason: string } {
  if (product.variants.length === 0) return { reason: 'the product has no variants' };
  const variants = options.groupVariants ? product.variants : product.variants.slice(0, 1);
  return {
    url: productUrl(options.store, product.handle),
    title: product.title || null,
    chunks: variants.map((variant) => variantChunk(product, variant, options)),
  };
}

export const productUrl = (store: string, handle: string) => `${store}/products/${encodeURIComponent(handle)}`;

function variantChunk(product: Product, variant: Variant, options: ProductOptions): SourceChunk {
  const headings = [product.title];
  if (variant.title && variant.title !== DEFAULT_VARIANT_TITLE) headings.push(variant.title);
  let html = `<h1>${escapeHtml(headings.join(' - '))}</h1>${product.bodyHtml}`;
  if (options.tagPatterns) {
    const matched = options.tagPatterns.filter(({ regex }) => product.tags.some((tag) => regex.test(tag)));
    html = `<div>${html}</div>\n\n<div>${matched.map(({ source }) => `<span>${escapeHtml(source)}</span>`).join('')}</div>`;
  }
  return {
    trackingId: options.groupVariants ? variant.id : product.id,
    html,
    headings,
    numValue: variant.price,
    tags: product.tags,
    imageUrls: imagesOf(product, options.groupVariants ? variant : null),
  };
}

/** The product's image URLs, the variant's own first. */
function imagesOf(product: Product, variant: Variant | null): string[] {
  const own = variant ? [variant.imageSrc, ...product.images.filter((i) => i.variantIds.includes(variant.id)).map((i) => i.src)] : [];
  const all = [...own, ...product.images.map((i) => i.src)].filter((src): src is string => Boolean(src));
  return [...new Set(all)];
}

/** The patterns that compile, as Trieve skips the ones that do not. */
export function compileTagPatterns(patterns: readonly string[]): TagPattern[] {
  return patterns.flatMap((source) => {
    for (const flags of ['u', '']) {
      try {
        return [{ source, regex: new RegExp(source, flags) }];
      } catch {
        // Rust's syntax accepts escapes JavaScript's Unicode mode refuses; try without it.
      }
    }
    return [];
  });
}

/** Shopify gives tags as a list, or as one comma-separated string. */
function readTags(value: unknown): string[] {
  const tags = Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : typeof value === 'string' ? value.split(',') : [];
  return [...new Set(tags.map((t) => t.trim()).filter(Boolean))];
}

/** An id as Shopify sends it (a number, or digits in a string). */
function readId(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return value.trim();
  return null;
}

/** A price as Shopify sends it ("19.99", sometimes a number); null when it is none. */
function readPrice(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || !value.trim()) return null;
  const price = Number(value.trim());
  return Number.isFinite(price) ? price : null;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
