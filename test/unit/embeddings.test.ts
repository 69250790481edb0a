// The embedder seam: the built-in embedder, and an OpenAI-compatible endpoint (a local stand-in server).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinEmbedder } from '../../server/engines/embeddings/builtin.js';
import { EmbeddingError, embedderFor } from '../../server/engines/embeddings/index.js';
import { STRICT_OUTBOUND, type OutboundSettings } from '../../server/engines/outbound.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i], 0);

describe('built-in embedder', () => {
  const embedder = new BuiltinEmbedder(384);

  it('is deterministic, of the asked dimension, and unit length', async () => {
    const [first] = await embedder.embed(['Refund policy for damaged items'], 'document');
    const [again] = await new BuiltinEmbedder(384).embed(['Refund policy for damaged items'], 'query');
    expect(first).toHaveLength(384);
    expect(again).toEqual(first);
    expect(cosine(first, first)).toBeCloseTo(1, 10);
    expect((await new BuiltinEmbedder(7).embed(['x'], 'document'))[0]).toHaveLength(7);
  });

  it('puts texts sharing words and word forms closer than unrelated texts', async () => {
    const [query, related, inflected, unrelated] = await embedder.embed(
      ['how do I return a damaged item', 'returns of damaged items are free', 'returning damages', 'the weather in Lisbon is sunny'],
      'document',
    );
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.2);
    expect(cosine(query, inflected)).toBeGreaterThan(cosine(query, unrelated));
  });

  it('gives empty and punctuation-only texts a valid vector', async () => {
    const [empty] = await embedder.embed(['  ...  '], 'document');
    expect(empty.every(Number.isFinite)).toBe(true);
    expect(cosine(empty, empty)).toBeCloseTo(1, 10);
  });
});

describe('OpenAI-compatible endpoint', () => {
  let server: http.Server;
  let baseUrl: string;
  const requests: { inputs: string[]; auth?: string }[] = [];
  let failuresLeft = 0;
  let mode: 'ok' | 'unauthorized' | 'wrong-size' = 'ok';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw) as { input: string[]; model: string };
        requests.push({ inputs: body.input, auth: req.headers.authorization });
        if (failuresLeft > 0) {
          failuresLeft--;
          res.writeHead(503).end('busy');
        } else if (mode === 'unauthorized') {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"words of the endpoint"}');
        } else {
          const size = mode === 'wrong-size' ? 3 : 4;
          const data = body.input.map((text, index) => ({ index, embedding: Array.from({ length: size }, (_, i) => text.length + i) }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: data.reverse(), model: body.model }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const settings = () => ({ EMBEDDING_BASE_URL: baseUrl, EMBEDDING_MODEL_NAME: 'stand-in', EMBEDDING_SIZE: 4, EMBEDDING_QUERY_PREFIX: 'query: ' });
  /** The stand-in as a tenant's URL, on a loopback address the operator allows. */
  const tenant: OutboundSettings = { allowPrivate: ['127.0.0.1'], embedding: null, reranker: null, llm: null };
  /** The stand-in as the operator's EMBEDDING_BASE_URL, with the instance key. */
  const operator = (): OutboundSettings => ({ allowPrivate: [], embedding: { baseUrl, apiKey: 'instance-key' }, reranker: null, llm: null });
  const embedder = (outbound = tenant) => embedderFor(settings(), outbound);

  it("batches, keeps order, sends the instance key to the operator's endpoint, and prefixes queries", async () => {
    requests.length = 0;
    mode = 'ok';
    const texts = Array.from({ length: 150 }, (_, i) => 'x'.repeat(i + 1));
    const vectors = await embedder(operator()).embed(texts, 'document');
    expect(requests.map((r) => r.inputs.length)).toEqual([64, 64, 22]);
    expect(requests.every((r) => r.auth === 'Bearer instance-key')).toBe(true);
    expect(vectors.map((v) => v[0])).toEqual(texts.map((t) => t.length));
    const [query] = await embedder().embed(['abc'], 'query');
    expect(requests.at(-1)!.inputs).toEqual(['query: abc']);
    expect(query[0]).toBe('query: abc'.length);
  });

  it('sends the instance key to no endpoint but its own', async () => {
    requests.length = 0;
    mode = 'ok';
    const elsewhere: OutboundSettings = { ...tenant, embedding: { baseUrl: 'https://embeddings.example.com/v1', apiKey: 'instance-key' } };
    await embedder(elsewhere).embed(['abc'], 'document');
    // Another path of the same server is another endpoint too.
    await embedderFor(
      { ...settings(), EMBEDDING_BASE_URL: baseUrl.replace(/\/v1$/, '/tenant') },
      { ...tenant, embedding: { baseUrl, apiKey: 'instance-key' } },
    ).embed(['abc'], 'document');
    expect(requests.map((r) => r.auth)).toEqual([undefined, undefined]);
  });

  it('refuses a loopback endpoint the operator does not allow, at once, naming OUTBOUND_ALLOW_PRIVATE', async () => {
    requests.length = 0;
    const failure = await embedder(STRICT_OUTBOUND)
      .embed(['abc'], 'document')
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EmbeddingError);
    expect(failure).toMatchObject({
      transient: false,
      message: expect.stringMatching(/was not called: 127\.0\.0\.1 is a loopback address.*OUTBOUND_ALLOW_PRIVATE/),
    });
    expect(requests).toEqual([]);
  });

  it('retries server errors and succeeds', async () => {
    mode = 'ok';
    failuresLeft = 2;
    requests.length = 0;
    const vectors = await embedder().embed(['abc'], 'document');
    expect(vectors).toHaveLength(1);
    expect(requests).toHaveLength(3);
  });

  it("fails at once with a clear error on 401 (without the endpoint's words) and on a wrong dimension", async () => {
    mode = 'unauthorized';
    requests.length = 0;
    await expect(embedder().embed(['abc'], 'document')).rejects.toThrow(new EmbeddingError(`embedding endpoint ${baseUrl}/embeddings answered 401`));
    expect(requests).toHaveLength(1);
    // A refusal, not an outage: durable work does not retry it.
    await expect(embedder().embed(['abc'], 'document')).rejects.toMatchObject({ transient: false });
    mode = 'wrong-size';
    const failure = embedder().embed(['abc'], 'document');
    await expect(failure).rejects.toBeInstanceOf(EmbeddingError);
    await expect(embedder().embed(['abc'], 'document')).rejects.toThrow(/expects 4 \(EMBEDDING_SIZE\)/);
  });

  it('names an endpoint that does not answer', async () => {
    const dead = embedderFor({ ...settings(), EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1' }, tenant);
    await expect(dead.embed(['abc'], 'document')).rejects.toThrow(/did not answer/);
  }, 20_000);

  it('marks an outage that outlasts its retries as transient (durable work retries it later)', async () => {
    mode = 'ok';
    failuresLeft = 4;
    requests.length = 0;
    const failure = await embedder()
      .embed(['abc'], 'document')
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EmbeddingError);
    expect(failure).toMatchObject({ transient: true, message: expect.stringMatching(/answered 503/) });
    expect(requests).toHaveLength(4);
    const dead = await embedderFor({ ...settings(), EMBEDDING_BASE_URL: 'http://127.0.0.1:9/v1' }, tenant)
      .embed(['abc'], 'document')
      .catch((e: unknown) => e);
    expect(dead).toMatchObject({ transient: true });
  }, 20_000);
});
