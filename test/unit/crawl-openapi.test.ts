// The OpenAPI crawl source against documents served here over real HTTP on 127.0.0.1: an OpenAPI 3
// JSON document, a YAML one, a Swagger 2.0 one and broken ones. Pages per tag, chunk contents, the
// tag filter, the limit, tracking ids, and what is skipped and why.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlOpenApi, type OpenApiCrawlOptions, operationTrackingId } from '../../server/crawl/openapi/index.js';
import type { SourceEvent, SourcePage } from '../../server/crawl/types.js';
import { STRICT_OUTBOUND } from '../../server/engines/outbound.js';
import { localStandIns } from '../support/outbound.js';

const petstore = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  tags: [{ name: 'store' }, { name: 'pets' }],
  paths: {
    '/pets': {
      get: {
        tags: ['pets'],
        summary: 'List pets',
        description: 'Lists every pet.\n\nPaged with `limit` & <offset>.',
        operationId: 'listPets',
        parameters: [{ $ref: '#/components/parameters/Limit' }],
        responses: {
          '200': { description: 'The pets', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } } },
        },
      },
      post: {
        tags: ['pets'],
        operationId: 'createPet',
        requestBody: { $ref: '#/components/requestBodies/NewPet' },
        responses: { '201': { description: 'Created' }, default: { $ref: '#/components/responses/Error' } },
      },
    },
    '/pets/{petId}': {
      parameters: [{ name: 'petId', in: 'path', required: true, description: 'The pet', schema: { type: 'integer', format: 'int64' } }],
      get: { tags: ['pets', 'store'], summary: 'Get a pet', responses: { '200': { description: 'A pet' }, '404': { description: 'No such pet' } } },
    },
    '/orders': {
      post: { tags: ['store'], summary: 'Place an order', responses: { '200': { description: 'OK' } } },
    },
    '/health': { get: { summary: 'Health', responses: { '204': { description: 'Up' } } } },
  },
  components: {
    parameters: { Limit: { name: 'limit', in: 'query', required: false, description: 'At most this many', schema: { type: 'integer' } } },
    requestBodies: {
      NewPet: {
        required: true,
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/NewPet' } },
          'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/NewPet' } },
        },
      },
    },
    responses: { Error: { description: 'Something went wrong', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    schemas: { Pet: { type: 'object' }, NewPet: { type: 'object' }, Error: { type: 'object' } },
  },
};

const yamlDocument = `openapi: 3.1.0
info:
  title: Chunks
  version: "1"
paths:
  /chunk/{chunk_id}:
    delete:
      tags: [Chunk]
      summary: Delete a chunk
      parameters:
        - $ref: '#/components/parameters/ChunkId'
        - name: TR-Dataset
          in: header
          required: true
          schema: { type: string }
      responses:
        204: { description: Deleted }
  /chunk:
    put:
      tags: [Chunk]
      description: Updates a chunk
      requestBody:
        content:
          application/json:
            schema: { $ref: '#/components/schemas/UpdateChunkReqPayload' }
      responses:
        "200": { description: OK }
components:
  parameters:
    ChunkId:
      name: chunk_id
      in: path
      required: true
      description: The chunk's id
      schema: { type: string, format: uuid }
`;

const swagger = {
  swagger: '2.0',
  info: { title: 'Old', version: '1' },
  consumes: ['application/json'],
  paths: {
    '/users': {
      post: {
        tags: ['users'],
        summary: 'Create a user',
        parameters: [
          { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/User' } },
          { name: 'dry', in: 'query', type: 'boolean' },
        ],
        responses: { '200': { description: 'The user', schema: { $ref: '#/definitions/User' } } },
      },
    },
  },
  definitions: { User: { type: 'object' } },
};

let server: Server;
let base: string;
const docs = 'https://docs.example.com/api';

beforeAll(async () => {
  server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => res.writeHead(status, { 'content-type': type }).end(body);
    switch (req.url) {
      case '/petstore.json':
        return send(200, 'application/json', JSON.stringify(petstore));
      case '/chunks.yaml':
        return send(200, 'application/yaml', yamlDocument);
      case '/swagger.json':
        return send(200, 'application/json', JSON.stringify(swagger));
      case '/broken.json':
        return send(200, 'application/json', '{"openapi": "3.0.0", "paths": {');
      case '/not-openapi.json':
        return send(200, 'application/json', JSON.stringify({ name: 'a package', version: '1.0.0' }));
      case '/old.json':
        return send(200, 'application/json', JSON.stringify({ swagger: '1.2', apis: [] }));
      case '/empty.json':
        return send(200, 'application/json', JSON.stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: {} }));
      default:
        return send(404, 'text/plain', 'not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function crawl(options: Partial<OpenApiCrawlOptions> & { specUrl: string }, outbound = localStandIns, signal?: AbortSignal): Promise<SourceEvent[]> {
  const events: SourceEvent[] = [];
  for await (const event of crawlOpenApi({ docsUrl: docs, limit: 100, ...options }, { outbound, signal })) events.push(event);
  return events;
}

const pagesOf = (events: SourceEvent[]): SourcePage[] => events.flatMap((e) => ('page' in e ? [e.page] : []));
const chunkOf = (pages: SourcePage[], heading: string) => {
  const chunk = pages.flatMap((p) => p.chunks).find((c) => c.headings[1] === heading);
  if (!chunk) throw new Error(`no chunk headed ${heading}`);
  return chunk;
};

describe('crawlOpenApi: an OpenAPI 3 JSON document', () => {
  it('makes one page per tag, in the order the document declares them, untagged operations under default', async () => {
    const events = await crawl({ specUrl: `${base}/petstore.json` });
    expect(events.every((e) => 'page' in e)).toBe(true);
    const pages = pagesOf(events);
    expect(pages.map((p) => [p.title, p.url])).toEqual([
      ['store', `${docs}#tag/store`],
      ['pets', `${docs}#tag/pets`],
      ['default', `${docs}#tag/default`],
    ]);
    expect(pages.map((p) => p.chunks.map((c) => c.headings))).toEqual([
      [['store', 'Place an order']],
      [
        ['pets', 'List pets'],
        ['pets', 'POST /pets'],
        ['pets', 'Get a pet'],
      ],
      [['default', 'Health']],
    ]);
    // An operation with two tags is on its first tag's page only, and carries both tags.
    expect(chunkOf(pages, 'Get a pet').tags).toEqual(['pets', 'store', 'openapi-route']);
    expect(chunkOf(pages, 'Health').tags).toEqual(['openapi-route']);
  });

  it('puts method, path, summary, description, parameters, request body and responses in the chunk', async () => {
    const pages = pagesOf(await crawl({ specUrl: `${base}/petstore.json` }));
    const list = chunkOf(pages, 'List pets').html;
    expect(list).toContain('<h2><span class="openapi-method">GET</span> <span class="openapi-path">/pets</span></h2>');
    expect(list).toContain('<p class="openapi-summary">List pets</p>');
    // Markdown kept as paragraphs, escaped.
    expect(list).toContain('<p>Lists every pet.</p><p>Paged with `limit` &amp; &lt;offset&gt;.</p>');
    expect(list).toContain('<code>listPets</code>');
    // The parameter came through a $ref.
    expect(list).toContain('<li><code>limit</code> (query, optional, integer): At most this many</li>');
    expect(list).toContain('<code>200</code>: The pets (<code>application/json</code>: Pet[])');

    const create = chunkOf(pages, 'POST /pets').html;
    expect(create).toContain('<span class="openapi-method">POST</span> <span class="openapi-path">/pets</span>');
    expect(create).toContain('<h3>Request body</h3><p>Required.</p>');
    expect(create).toContain('<li><code>application/json</code>: NewPet</li><li><code>application/x-www-form-urlencoded</code>: NewPet</li>');
    expect(create).toContain('<code>default</code>: Something went wrong (<code>application/json</code>: Error)');
    expect(create).not.toContain('<h3>Parameters</h3>');

    // Path-level parameters apply to the path's operations.
    const get = chunkOf(pages, 'Get a pet').html;
    expect(get).toContain('<li><code>petId</code> (path, required, integer (int64)): The pet</li>');
    expect(get).toContain('<code>404</code>: No such pet');
  });

  it('keeps only the operations carrying the tag asked for, on that tag page', async () => {
    const pages = pagesOf(await crawl({ specUrl: `${base}/petstore.json`, tag: 'store' }));
    expect(pages.map((p) => p.title)).toEqual(['store']);
    expect(pages[0].chunks.map((c) => c.headings)).toEqual([
      ['store', 'Get a pet'],
      ['store', 'Place an order'],
    ]);
    expect(pagesOf(await crawl({ specUrl: `${base}/petstore.json`, tag: 'PETS' })).map((p) => p.title)).toEqual(['pets']);
  });

  it('reports a tag no operation carries', async () => {
    expect(await crawl({ specUrl: `${base}/petstore.json`, tag: 'nope' })).toEqual([
      { skipped: { url: `${base}/petstore.json`, reason: expect.stringContaining('no operation in the document carries the tag nope') } },
    ]);
  });

  it('stops after `limit` operations, in document order', async () => {
    const pages = pagesOf(await crawl({ specUrl: `${base}/petstore.json`, limit: 2 }));
    expect(pages.flatMap((p) => p.chunks).map((c) => c.headings[1])).toEqual(['List pets', 'POST /pets']);
    expect(pages.map((p) => p.title)).toEqual(['pets']);
    expect(await crawl({ specUrl: `${base}/petstore.json`, limit: 0 })).toEqual([]);
  });

  it('gives each operation a tracking id that is stable across crawls and distinct from the others', async () => {
    const ids = async (specUrl: string) =>
      pagesOf(await crawl({ specUrl }))
        .flatMap((p) => p.chunks)
        .map((c) => c.trackingId);
    const first = await ids(`${base}/petstore.json`);
    expect(first).toHaveLength(5);
    expect(new Set(first).size).toBe(5);
    expect(await ids(`${base}/petstore.json`)).toEqual(first);
    // Pages come store first: its one operation is POST /orders.
    expect(first[0]).toBe(operationTrackingId(`${base}/petstore.json`, 'post', '/orders'));
    expect(first[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The same document elsewhere is another source.
    expect(first[0]).not.toBe(operationTrackingId(`${base}/other.json`, 'POST', '/orders'));
  });
});

describe('crawlOpenApi: other documents', () => {
  it('reads YAML, with $ref parameters and numeric status keys', async () => {
    const events = await crawl({ specUrl: `${base}/chunks.yaml`, docsUrl: 'https://docs.example.com/api#old' });
    const pages = pagesOf(events);
    expect(pages.map((p) => [p.title, p.url])).toEqual([['Chunk', 'https://docs.example.com/api#tag/Chunk']]);
    const del = chunkOf(pages, 'Delete a chunk').html;
    expect(del).toContain('<span class="openapi-method">DELETE</span> <span class="openapi-path">/chunk/{chunk_id}</span>');
    expect(del).toContain("<li><code>chunk_id</code> (path, required, string (uuid)): The chunk's id</li>");
    expect(del).toContain('<li><code>TR-Dataset</code> (header, required, string)</li>');
    expect(del).toContain('<code>204</code>: Deleted');
    const put = chunkOf(pages, 'PUT /chunk').html;
    expect(put).toContain('<p>Updates a chunk</p>');
    expect(put).toContain('<h3>Request body</h3><p>Optional.</p><ul><li><code>application/json</code>: UpdateChunkReqPayload</li></ul>');
  });

  it('reads Swagger 2.0: the body parameter as the request body', async () => {
    const pages = pagesOf(await crawl({ specUrl: `${base}/swagger.json` }));
    const html = chunkOf(pages, 'Create a user').html;
    expect(html).toContain('<li><code>dry</code> (query, optional, boolean)</li>');
    expect(html).not.toContain('<code>body</code>');
    expect(html).toContain('<h3>Request body</h3><p>Required.</p><ul><li><code>application/json</code>: User</li></ul>');
    expect(html).toContain('<code>200</code>: The user (<code>application/json</code>: User)');
  });
});

describe('crawlOpenApi: documents it cannot use', () => {
  const skippedOnly = async (specUrl: string, outbound = localStandIns) => {
    const events = await crawl({ specUrl }, outbound);
    expect(events).toHaveLength(1);
    const [event] = events;
    if (!('skipped' in event)) throw new Error('expected a skipped event');
    expect(event.skipped.url).toBe(specUrl);
    return event.skipped.reason;
  };

  it('skips a document that does not parse', async () => {
    expect(await skippedOnly(`${base}/broken.json`)).toMatch(/neither JSON nor YAML/);
  });

  it('skips a document that is not OpenAPI, or of a version it does not read', async () => {
    expect(await skippedOnly(`${base}/not-openapi.json`)).toMatch(/not an OpenAPI document/);
    expect(await skippedOnly(`${base}/old.json`)).toMatch(/Swagger version 1.2 is not supported/);
    expect(await skippedOnly(`${base}/empty.json`)).toMatch(/has no operations/);
  });

  it('skips a document whose URL answers with an error status', async () => {
    expect(await skippedOnly(`${base}/missing.json`)).toMatch(/status 404/);
  });

  it('skips a document nothing answers for', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await skippedOnly(`http://127.0.0.1:${port}/openapi.json`)).toMatch(/could not be fetched: the connection failed/);
  });

  it('refuses a private address without the allowance', async () => {
    expect(await skippedOnly(`${base}/petstore.json`, STRICT_OUTBOUND)).toMatch(/refused: 127\.0\.0\.1 is a loopback address/);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(crawl({ specUrl: `${base}/petstore.json` }, localStandIns, controller.signal)).rejects.toThrow('stop');
  });
});
