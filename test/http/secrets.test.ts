// No secret leaves the service. One service, run with the operator's own embedding and reranking
// endpoints (local stand-ins that record the Authorization header they receive), loopback refused
// except for the host name `localhost`, and its log lines captured:
// - tenants' URLs on private addresses are refused with a 400 naming OUTBOUND_ALLOW_PRIVATE, also
//   when a redirect leads there, and the instance keys go to the operator's endpoints only;
// - a foreign server's reply is never quoted back;
// - no key, cookie, link signature or crawl secret reaches a log line.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { loadConfig, secretValues } from '../../server/config.js';
import { crawlWebhookSecret } from '../../server/domain/files/links.js';
import { handlers } from '../../server/handlers/index.js';
import { postWebhook } from '../../server/ingest/webhook.js';
import { createLogger } from '../../server/log.js';
import { openServices, type Services } from '../../server/services.js';
import { checkResponse } from '../support/contract.js';
import { testEnvironment } from '../support/env.js';
import { startStandInReranker, type StandInReranker } from '../support/reranker.js';
import { seedCrawl } from '../support/seed.js';
import { ADMIN_KEY } from '../support/service.js';

const EMBEDDING_KEY = 'instance-embedding-key-0123456789';
const RERANKER_KEY = 'instance-reranker-key-0123456789';
/** What the stand-in says when it refuses; it must never come back to the caller. */
const REPLY_TEXT = 'words-of-the-endpoint-7f3a9c';

let services: Services;
let server: http.Server;
let url: string;
let embeddings: http.Server;
let embed: string;
const embedRequests: { path: string; authorization?: string }[] = [];
let reranker: StandInReranker;
const lines: string[] = [];
let env: Record<string, string>;
let orgId: string;

beforeAll(async () => {
  embeddings = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      embedRequests.push({ path: req.url ?? '', authorization: req.headers.authorization });
      if (req.url?.startsWith('/refuse/')) return res.writeHead(401, { 'content-type': 'text/plain' }).end(REPLY_TEXT);
      if (req.url?.startsWith('/hop/')) return res.writeHead(307, { location: `${embed}/v1/embeddings` }).end();
      const { input = [] } = JSON.parse(raw) as { input?: string[] };
      const data = input.map((_, index) => ({ index, embedding: [1, 0, 0, index] }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
  embed = `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}`;
  reranker = await startStandInReranker();

  env = await testEnvironment({
    EMBEDDING_BASE_URL: `${embed}/operator/v1`,
    EMBEDDING_API_KEY: EMBEDDING_KEY,
    RERANKER_BASE_URL: reranker.baseUrl,
    RERANKER_API_KEY: RERANKER_KEY,
    OUTBOUND_ALLOW_PRIVATE: 'localhost',
  });
  const logger = createLogger('info', { secrets: secretValues(env), destination: { write: (line: string) => void lines.push(line) } });
  services = await openServices(loadConfig(env), logger);
  server = http.createServer(createApp(services, handlers, logger));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  services.config.publicUrl = url;
  orgId = (await call('POST', '/api/organization', { body: { name: 'Secrets' } })).body.id;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await services?.close();
  await Promise.all([new Promise((resolve) => embeddings?.close(resolve)), reranker?.close()]);
});

async function call(method: string, path: string, init: { key?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const headers: Record<string, string> = { authorization: init.key ?? ADMIN_KEY, ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url + path, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await response.text();
  const body = text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  checkResponse(method, url + path, response.status, body, response.headers.get('content-type'));
  return { status: response.status, body };
}

async function dataset(serverConfiguration: Record<string, unknown> = {}): Promise<string> {
  const reply = await call('POST', '/api/dataset', {
    headers: { 'SVC-Organization': orgId },
    body: { dataset_name: `d ${Math.random()}`, server_configuration: serverConfiguration },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.id;
}

const embeddingDataset = (baseUrl: string) => dataset({ EMBEDDING_BASE_URL: baseUrl, EMBEDDING_MODEL_NAME: 'stand-in', EMBEDDING_SIZE: 4 });
const addChunk = (datasetId: string, text = 'a kayak for two') =>
  call('POST', '/api/chunk', { headers: { 'SVC-Dataset': datasetId }, body: { chunk_html: text } });

describe("tenants' embedding endpoints", () => {
  it('on a loopback address are refused with a 400 naming OUTBOUND_ALLOW_PRIVATE, and never connected to', async () => {
    embedRequests.length = 0;
    const reply = await addChunk(await embeddingDataset(`${embed}/v1`));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/127\.0\.0\.1 is a loopback address.*OUTBOUND_ALLOW_PRIVATE/);
    expect(embedRequests).toEqual([]);
  });

  it("get no instance key; the operator's endpoint gets it", async () => {
    embedRequests.length = 0;
    expect((await addChunk(await embeddingDataset(`${embed.replace('127.0.0.1', 'localhost')}/v1`))).status).toBe(200);
    expect((await addChunk(await embeddingDataset(`${embed}/operator/v1`))).status).toBe(200);
    expect(embedRequests).toEqual([
      { path: '/v1/embeddings', authorization: undefined },
      { path: '/operator/v1/embeddings', authorization: `Bearer ${EMBEDDING_KEY}` },
    ]);
  });

  it('may not redirect to a private address', async () => {
    embedRequests.length = 0;
    const reply = await addChunk(await embeddingDataset(`${embed.replace('127.0.0.1', 'localhost')}/hop/v1`));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/127\.0\.0\.1 is a loopback address.*OUTBOUND_ALLOW_PRIVATE/);
    expect(embedRequests.map((r) => r.path)).toEqual(['/hop/v1/embeddings']);
  });

  it('are named with their status when they refuse, their reply never quoted', async () => {
    const endpoint = `${embed.replace('127.0.0.1', 'localhost')}/refuse/v1`;
    const reply = await addChunk(await embeddingDataset(endpoint));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe(`the chunks could not be embedded: embedding endpoint ${endpoint}/embeddings answered 401`);
    expect(JSON.stringify(reply.body)).not.toContain(REPLY_TEXT);
  });
});

describe("tenants' reranking endpoints", () => {
  const rerank = async (baseUrl: string) => {
    const datasetId = await dataset({ RERANKER_BASE_URL: baseUrl });
    expect((await addChunk(datasetId)).status).toBe(200);
    return call('POST', '/api/chunk/search', {
      headers: { 'SVC-Dataset': datasetId },
      body: { query: 'kayak', search_type: 'fulltext', sort_options: { sort_by: { rerank_type: 'cross_encoder' } } },
    });
  };

  it('on a loopback address are refused with a 400 naming OUTBOUND_ALLOW_PRIVATE', async () => {
    reranker.reset();
    const reply = await rerank(reranker.baseUrl.replace('127.0.0.1', '127.0.0.2'));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/127\.0\.0\.2 is a loopback address.*OUTBOUND_ALLOW_PRIVATE/);
    expect(reranker.requests).toEqual([]);
  });

  it("get no instance key; the operator's endpoint gets it", async () => {
    reranker.reset();
    expect((await rerank(reranker.baseUrl.replace('127.0.0.1', 'localhost'))).status).toBe(200);
    expect((await rerank(reranker.baseUrl)).status).toBe(200);
    expect(reranker.requests.map((r) => r.authorization)).toEqual([undefined, `Bearer ${RERANKER_KEY}`]);
  });

  it('are named with their status when they refuse, their reply never quoted', async () => {
    reranker.reset();
    reranker.answer = { status: 403, body: { error: REPLY_TEXT } };
    const reply = await rerank(reranker.baseUrl.replace('127.0.0.1', 'localhost'));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/reranker endpoint .* answered 403$/);
    expect(JSON.stringify(reply.body)).not.toContain(REPLY_TEXT);
    reranker.reset();
  });
});

it("a webhook on a loopback address is not delivered, even under the operator's embedding endpoint", async () => {
  embedRequests.length = 0;
  const body = { event_type: 'file_uploaded', dataset_id: 'd', file_id: 'f', file_name: 'x', status: 'completed', chunks_created: 1, error: null } as const;
  await expect(postWebhook(`${embed}/operator/v1/hook`, body, services.config.outbound)).rejects.toThrow(
    /127\.0\.0\.1 is a loopback address.*OUTBOUND_ALLOW_PRIVATE/,
  );
  expect(embedRequests).toEqual([]);
});

describe('log lines', () => {
  it('carry no key, cookie, link signature or crawl secret', async () => {
    const cookie = 'session=cookie-secret-5b8e1d2f';
    const created = await call('POST', '/api/organization/api_key', {
      headers: { 'SVC-Organization': orgId, cookie },
      body: { name: 'app', role: 2, default_params: { search_type: 'fulltext', page_size: 5 } },
    });
    expect(created.status).toBe(200);
    const orgKey: string = created.body.api_key;
    const datasetId = await dataset();
    const upload = await call('POST', '/api/file', {
      key: `Bearer ${orgKey}`,
      headers: { 'SVC-Dataset': datasetId },
      body: { base64_file: Buffer.from('Kayaks float.').toString('base64'), file_name: 'kayak.txt' },
    });
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    const fileId: string = upload.body.file_metadata.id;
    const link: string = (await call('GET', `/api/file/${fileId}`, { key: orgKey, headers: { 'SVC-Dataset': datasetId } })).body.s3_url;
    const signature = new URL(link).searchParams.get('signature')!;
    expect((await fetch(link)).status).toBe(200);
    const scrapeId = (
      await services.store
        .db('crawl_requests')
        .where({ id: await seedCrawl(services.store.db, datasetId) })
        .first('scrape_id')
    ).scrape_id;
    const crawlSecret = await crawlWebhookSecret(services, scrapeId);
    const page = {
      data: { html: '<p>Hello</p>', metadata: { title: 'Hello' } },
      metadata: { dataset_id: datasetId, webhook_secret: crawlSecret },
      scrapeId,
    };
    expect((await call('POST', '/api/file/html_page', { key: '', body: page })).status).toBe(204);
    // The same secret in a query string (refused, but logged).
    await call('POST', `/api/file/html_page?crawlWebhookSecret=${crawlSecret}`, { key: '', body: page });
    // An error whose text holds instance secrets, as a failing engine might word it.
    const logger = createLogger('info', { secrets: secretValues(env), destination: { write: (line: string) => void lines.push(line) } });
    logger.error({ err: new Error(`refused key ${EMBEDDING_KEY} and ${env.TYPESENSE_API_KEY ?? RERANKER_KEY}`) }, `admin ${ADMIN_KEY}`);

    const log = lines.join('');
    expect(log).toContain('"authorization":"[Redacted]"');
    expect(log).toContain(`/api/file/${fileId}/content?`);
    expect(log).toContain('signature=[Redacted]');
    expect(log).toContain('refused key [Redacted] and [Redacted]');
    for (const secret of [ADMIN_KEY, orgKey, EMBEDDING_KEY, RERANKER_KEY, env.TYPESENSE_API_KEY, 'cookie-secret-5b8e1d2f', signature, crawlSecret]) {
      if (secret) expect(log, `a log line holds ${secret.slice(0, 12)}…`).not.toContain(secret);
    }
  });

  it('above info, are written for server errors only, naming the request', async () => {
    const quiet: string[] = [];
    const logger = createLogger('warn', { secrets: secretValues(env), destination: { write: (line: string) => void quiet.push(line) } });
    const failing = { ...handlers, get_dataset: async () => Promise.reject(new Error('the engine broke')) };
    const app = http.createServer(createApp(services, failing, logger));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
      const datasetId = await dataset();
      const headers = { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId };
      expect(
        (await fetch(`${base}/api/dataset/organization/${orgId}?limit=5`, { headers: { authorization: ADMIN_KEY, 'SVC-Organization': orgId } })).status,
      ).toBe(200);
      expect(quiet).toEqual([]);
      const failed = await fetch(`${base}/api/dataset/${datasetId}`, { headers });
      expect(failed.status).toBe(500);
      expect(quiet).toHaveLength(1);
      const line = JSON.parse(quiet[0]);
      expect(line).toMatchObject({ level: 50, msg: 'request failed', req: { method: 'GET' }, err: { message: 'the engine broke' } });
      expect(line.req.url).toBe(`/api/dataset/${datasetId}`);
      expect(quiet[0]).not.toContain(ADMIN_KEY);
    } finally {
      await new Promise((resolve) => app.close(resolve));
    }
  });
});
