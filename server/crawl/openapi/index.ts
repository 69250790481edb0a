// An OpenAPI document as a crawl source: one chunk per operation (method and path), one page per
// tag (operations without one under "default"), each page at the docs site's fragment for its tag.
// The reference reads the same options (openapi_schema_url, openapi_tag) but matches operations to
// pages of a site crawl; here the document is the source, so the chunks need no site to exist.
// The document is fetched through outboundFetch, so private addresses stay refused unless allowed.
// Any failure to get or read it is one `skipped` event for the document's URL, and nothing else.
import { OutboundRefusedError, type OutboundResponse, type OutboundSettings, outboundFetch } from '../../engines/outbound.js';
import { boundedText } from '../body.js';
import { nameBasedUuid } from '../../ingest/ids.js';
import type { SourceChunk, SourceEvent } from '../types.js';
import { CRAWLER_TOKEN } from '../website/types.js';
import { operationHtml } from './chunks.js';
import { type ApiDocument, DocumentError, type Operation, readDocument } from './document.js';

export interface OpenApiCrawlOptions {
  /** Where the document is: JSON or YAML, OpenAPI 3.x or Swagger 2.0. */
  specUrl: string;
  /** The rendered docs the pages link to: each tag's page is this URL with `#tag/<tag>`. */
  docsUrl: string;
  /** Only the operations carrying this tag (compared without regard to case). */
  tag?: string | null;
  /** Operations at most, in the document's order. */
  limit: number;
}

export interface OpenApiCrawlDeps {
  outbound: OutboundSettings;
  /** Stops the crawl: the iteration throws the signal's reason. */
  signal?: AbortSignal;
  /** Defaults: 20 MB and 30 s (large public documents run to several MB). */
  maxBytes?: number;
  timeoutMs?: number;
}

export { type ApiDocument, DocumentError, type Operation, readDocument } from './document.js';

export const OPENAPI_USER_AGENT = `${CRAWLER_TOKEN}/0.13.0 (chunk-search-service OpenAPI crawler)`;
/** The page of operations that carry no tag, as documentation renderers name it. */
export const UNTAGGED = 'default';
/** Every chunk of this source carries it, as the reference's route chunks do. */
export const ROUTE_TAG = 'openapi-route';

const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

/** The chunk of `METHOD path` in the document at specUrl: the same on every crawl of it. */
export const operationTrackingId = (specUrl: string, method: string, path: string) =>
  nameBasedUuid(`openapi-operation:${specUrl}:${method.toUpperCase()} ${path}`);

export async function* crawlOpenApi(options: OpenApiCrawlOptions, deps: OpenApiCrawlDeps): AsyncGenerator<SourceEvent> {
  const { specUrl } = options;
  deps.signal?.throwIfAborted();
  let docsUrl: URL;
  try {
    docsUrl = new URL(options.docsUrl);
  } catch {
    yield { skipped: { url: specUrl, reason: `the docs URL (${options.docsUrl}) is not a URL` } };
    return;
  }
  const fetched = await fetchDocument(specUrl, deps);
  if ('reason' in fetched) {
    yield { skipped: { url: specUrl, reason: fetched.reason } };
    return;
  }
  let document: ApiDocument;
  try {
    document = readDocument(fetched.text);
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    yield { skipped: { url: specUrl, reason: error.message } };
    return;
  }
  const wanted = options.tag?.trim() ? options.tag.trim() : null;
  const matching = wanted ? document.operations.filter((op) => op.tags.some((t) => sameTag(t, wanted))) : document.operations;
  if (!matching.length) {
    const reason = wanted ? `no operation in the document carries the tag ${wanted}` : `the document (${document.version}) has no operations`;
    yield { skipped: { url: specUrl, reason } };
    return;
  }
  for (const [tag, operations] of groupByTag(matching.slice(0, Math.max(0, options.limit)), document.declaredTags, wanted)) {
    deps.signal?.throwIfAborted();
    const url = new URL(docsUrl);
    url.hash = `tag/${encodeURIComponent(tag)}`;
    const chunks = operations.map(
      (op): SourceChunk => ({
        trackingId: operationTrackingId(specUrl, op.method, op.path),
        html: operationHtml(op),
        headings: [tag, op.summary ?? `${op.method} ${op.path}`],
        tags: [...op.tags, ROUTE_TAG],
      }),
    );
    yield { page: { url: url.href, title: tag, chunks } };
  }
}

const sameTag = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: 'accent' }) === 0;

/**
 * Operations by the tag whose page holds them: the wanted tag when one is asked for, else each
 * operation's first tag, so an operation is on one page only (its tracking id is stored once).
 * Pages come in the order the document declares its tags, then in the order of first use.
 */
function groupByTag(operations: Operation[], declared: string[], wanted: string | null): Map<string, Operation[]> {
  const byTag = new Map<string, Operation[]>();
  for (const op of operations) {
    const tag = wanted ? (op.tags.find((t) => sameTag(t, wanted)) ?? wanted) : (op.tags[0] ?? UNTAGGED);
    const list = byTag.get(tag);
    if (list) list.push(op);
    else byTag.set(tag, [op]);
  }
  const order = new Map(declared.map((t, i) => [t, i]));
  const rank = (tag: string) => order.get(tag) ?? declared.length;
  // The sort is stable, so undeclared tags keep their order of first use.
  return new Map([...byTag].sort(([a], [b]) => rank(a) - rank(b)));
}

/** The document's text, or why there is none. Throws only when the crawl is aborted. */
async function fetchDocument(specUrl: string, deps: OpenApiCrawlDeps): Promise<{ text: string } | { reason: string }> {
  const maxBytes = deps.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let response: OutboundResponse;
  try {
    response = await outboundFetch(deps.outbound, specUrl, {
      headers: { 'user-agent': OPENAPI_USER_AGENT, accept: 'application/json, application/yaml, text/yaml, */*;q=0.5' },
      timeoutMs,
      signal: deps.signal,
    });
  } catch (error) {
    deps.signal?.throwIfAborted();
    if (error instanceof OutboundRefusedError) return { reason: `the document's URL was refused: ${error.message}` };
    return { reason: `the document could not be fetched: ${(error as Error).message || 'the connection failed'}` };
  }
  const unread = async (reason: string) => {
    await response.body?.cancel().catch(() => {});
    return { reason };
  };
  if (response.status < 200 || response.status > 299) return unread(`the document's URL answered with status ${response.status}`);
  try {
    const text = await boundedText(response, maxBytes);
    if (text === null) return { reason: `the document is larger than ${maxBytes} bytes` };
    return { text };
  } catch (error) {
    deps.signal?.throwIfAborted();
    return { reason: `the document could not be read: ${(error as Error).message || 'the connection failed'}` };
  }
}
