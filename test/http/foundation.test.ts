// The HTTP foundation: health, docs, the error body for every kind of failure, bootstrap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, healthCheck } from '../../sdk/src/generated/sdk.gen.js';
import { mode } from '../support/env.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

describe('health', () => {
  it('answers 200 naming the engines of the mode', async () => {
    const { data, response } = await healthCheck({ client: service.client() });
    expect(response.status).toBe(200);
    expect(data).toEqual(
      mode === 'full'
        ? { store: 'postgres', lexical: 'typesense', workflows: 'temporal', embedder: 'builtin' }
        : { store: 'pglite', lexical: 'postgres', workflows: 'in-process', embedder: 'builtin' },
    );
  });

  it('answers 503 naming the engine that does not answer', async () => {
    const broken = await startTestService();
    try {
      await broken.services.store.db.destroy();
      const reply = await broken.request('GET', '/api/health');
      expect(reply.status).toBe(503);
      expect(reply.body.message).toMatch(/^the database \((pglite|postgres)\) does not answer/);
    } finally {
      await broken.stop();
    }
  });

  it('answers a conditional GET with its body: no ETag, never an undeclared 304', async () => {
    const plain = await fetch(`${service.url}/api/health`);
    expect(plain.headers.get('etag')).toBeNull();
    const reply = await service.request('GET', '/api/health', { headers: { 'if-none-match': '*' } });
    expect(reply.status).toBe(200);
    expect(reply.body).toHaveProperty('store');
  });

  it('needs no API key', async () => {
    const reply = await service.request('GET', '/api/health');
    expect(reply.status).toBe(200);
  });
});

describe('docs', () => {
  it('serves the API reference page and its assets from the npm package', async () => {
    const page = await fetch(`${service.url}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui-bundle.js');
    const script = await fetch(`${service.url}/docs/swagger-ui-bundle.js`);
    expect(script.status).toBe(200);
    const spec = await (await fetch(`${service.url}/openapi.json`)).json();
    expect(spec.info.version).toBe('0.13.0');
  });

  it('points Try it out at the host the page was loaded from, whatever the port', async () => {
    // The page loads the document by a relative link, and Swagger UI resolves the servers' URLs
    // against the document's own; this service listens on a port the contract cannot know.
    const pageUrl = `${service.url}/docs/`;
    const specLink = (await (await fetch(pageUrl)).text()).match(/SwaggerUIBundle\(\{ url: '([^']+)'/)?.[1];
    expect(specLink).toBeDefined();
    const specUrl = new URL(specLink!, pageUrl);
    const spec = await (await fetch(specUrl)).json();
    expect(spec.servers.length).toBeGreaterThan(0);
    for (const server of spec.servers) expect(new URL(server.url, specUrl).origin).toBe(new URL(service.url).origin);
  });
});

describe('bad input becomes a 4xx with {message}', () => {
  it('unknown route: 404', async () => {
    const reply = await service.request('GET', '/api/nope', { headers: { authorization: ADMIN_KEY } });
    expect(reply.status).toBe(404);
    expect(reply.body.message).toMatch(/not found|no route/i);
  });

  it('malformed JSON: 400 naming JSON', async () => {
    const reply = await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, rawBody: '{"name": ' });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/JSON/);
  });

  it('oversized body: 413', async () => {
    const big = await startTestService({ JSON_BODY_LIMIT: '1kb' });
    try {
      const reply = await big.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'x'.repeat(5000) } });
      expect(reply.status).toBe(413);
      expect(reply.body.message).toMatch(/limit/);
    } finally {
      await big.stop();
    }
  });

  it('missing required field: 400 naming it', async () => {
    const reply = await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: {} });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/name/);
  });

  it('wrong type: 400 naming the field', async () => {
    const reply = await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 42 } });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/name/);
  });

  it('missing API key: 401', async () => {
    const reply = await service.request('POST', '/api/organization', { body: { name: 'acme' } });
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/Authorization/);
  });

  it('unknown API key: 401', async () => {
    const reply = await service.request('POST', '/api/organization', { headers: { authorization: 'svc_nope' }, body: { name: 'acme' } });
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/not valid/);
  });

  it('nothing is written by a refused request', async () => {
    const before = await service.services.store.db('organizations').count<{ count: string }[]>('* as count');
    await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: '' } });
    await service.request('POST', '/api/organization', { body: { name: 'no key' } });
    const after = await service.services.store.db('organizations').count<{ count: string }[]>('* as count');
    expect(Number(after[0].count)).toBe(Number(before[0].count));
  });
});

describe('bootstrap', () => {
  it('the administrator key creates organizations', async () => {
    const { data, response } = await createOrganization({ client: service.client(), body: { name: 'Acme' } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: 'Acme', deleted: 0 });
  });
});
