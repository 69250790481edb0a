// The client object: where the service is, the API key, the dataset and organization it acts on,
// and the typed methods (methods/*) under the names the reference's client gives them.
import { type Client, createClient } from './generated/client/index.js';
import * as analytics from './methods/analytics.js';
import * as chunks from './methods/chunks.js';
import * as datasets from './methods/datasets.js';
import * as files from './methods/files.js';
import * as groups from './methods/groups.js';
import * as messages from './methods/messages.js';
import * as organizations from './methods/organizations.js';
import * as topics from './methods/topics.js';
import { defaultRetryOptions, type RetryOptions, retryingFetch } from './retry.js';

export interface ChunkSearchOptions {
  /** Where the service answers, e.g. `http://localhost:8090`. */
  baseUrl: string;
  /** An API key (an organization's key, or the instance administrator's), sent as the `Authorization` header. */
  apiKey?: string;
  /** The dataset the dataset-scoped methods act on (`SVC-Dataset`), by id or tracking id. */
  datasetId?: string;
  /** The organization the organization-scoped methods act on (`SVC-Organization`). */
  organizationId?: string;
  /**
   * Retries of requests answered 429 or 503: those of idempotent methods (GET, PUT, DELETE…) and
   * the POSTs of this client's methods that only read (searches, lookups). `false` turns them off.
   */
  retry?: Partial<RetryOptions> | false;
  /** The fetch to send requests with; the global one by default. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * A client of the Chunk Search Service.
 *
 * ```ts
 * const chunkSearch = new ChunkSearch({ baseUrl: 'http://localhost:8090', apiKey, datasetId });
 * await chunkSearch.createChunk({ chunk_html: '<p>The Aletsch glacier is 20 km long.</p>' });
 * const { chunks } = await chunkSearch.search({ query: 'glacier length', search_type: 'hybrid' });
 * ```
 *
 * Every operation of the API is also a generated function, which takes this client's `client`:
 *
 * ```ts
 * import { getOrganizationUsers, unwrap } from '@chunksearch/sdk';
 * const users = await unwrap(getOrganizationUsers({
 *   client: chunkSearch.client,
 *   headers: { 'SVC-Organization': organizationId },
 *   path: { organization_id: organizationId },
 * }));
 * ```
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merged interface's methods are put on the prototype below.
export class ChunkSearch {
  /** The generated client, with this object's base URL, API key and retries: pass it as `client` to any generated function. */
  readonly client: Client;
  /** @internal The same, retrying every method: for the POSTs that only read. */
  readonly readingClient: Client;
  /** The dataset the dataset-scoped methods act on; may be changed between calls. */
  datasetId?: string;
  /** The organization the organization-scoped methods act on; may be changed between calls. */
  organizationId?: string;

  constructor(options: ChunkSearchOptions) {
    this.datasetId = options.datasetId;
    this.organizationId = options.organizationId;
    const retry = options.retry === false ? { ...defaultRetryOptions, retries: 0 } : { ...defaultRetryOptions, ...options.retry };
    // The global fetch is looked up at each call, so that one installed later is used.
    const send: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const config = { baseUrl: options.baseUrl.replace(/\/+$/, ''), auth: options.apiKey, headers: options.headers };
    this.client = createClient({ ...config, fetch: retryingFetch(send, retry) });
    this.readingClient = createClient({ ...config, fetch: retryingFetch(send, retry, true) });
  }
}

type Methods = typeof analytics & typeof chunks & typeof datasets & typeof files & typeof groups & typeof messages & typeof organizations & typeof topics;

// The methods, written in their own modules, become the class's.
export interface ChunkSearch extends Methods {}
Object.assign(ChunkSearch.prototype, analytics, chunks, datasets, files, groups, messages, organizations, topics);
