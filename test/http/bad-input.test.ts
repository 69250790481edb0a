// Input the store cannot hold or the service cannot bear: each is refused with 4xx `{message}`
// naming the field, before anything is written. The rules are generic (server/http/wellFormed.ts:
// NUL, lone surrogates, non-finite numbers, nesting depth) or declared in the contract (lengths,
// page ranges), and the multipart reader refuses what the form cannot mean (server/http/multipart.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../server/http/clientError.js';
import { MAX_DEPTH } from '../../server/http/wellFormed.js';
import { ADMIN_KEY, startTestService, type Reply, type TestService } from '../support/service.js';

let service: TestService;
let organizationId: string;
let datasetId: string;
const db = () => service.services.store.db;

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: ADMIN_KEY, 'SVC-Organization': organizationId, 'SVC-Dataset': datasetId, ...extra };
}
const send = (method: string, path: string, body?: unknown, extra?: Record<string, string>) => service.request(method, path, { headers: headers(extra), body });
const sendRaw = (method: string, path: string, rawBody: string) =>
  service.request(method, path, { headers: headers({ 'content-type': 'application/json' }), rawBody });

async function count(table: string, where: Record<string, string> = { dataset_id: datasetId }): Promise<number> {
  const [row] = await db()(table).where(where).count<{ count: string }[]>('* as count');
  return Number(row.count);
}

/** A 400 whose message starts with the field it names. */
function expectRefused(reply: Reply, field: RegExp, status = 400) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.body.message).toMatch(field);
}

/** `{"a":{"a":...1...}}`, `levels` objects deep. */
function nested(levels: number): string {
  return '{"a":'.repeat(levels - 1) + '{"a":1' + '}'.repeat(levels);
}

beforeAll(async () => {
  service = await startTestService();
  organizationId = (await service.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'Bad input' } })).body.id;
  datasetId = (
    await service.request('POST', '/api/dataset', { headers: { authorization: ADMIN_KEY, 'SVC-Organization': organizationId }, body: { dataset_name: 'docs' } })
  ).body.id;
});
afterAll(async () => {
  await service?.stop();
});

describe('a NUL character is refused wherever it is, naming the field', () => {
  it.each([
    ['chunk_html', { chunk_html: 'a\u0000b' }, /^chunk_html: .*NUL/],
    ['tracking_id', { chunk_html: 'x', tracking_id: 'a\u0000' }, /^tracking_id: .*NUL/],
    ['a tag', { chunk_html: 'x', tag_set: ['ok', 'b\u0000'] }, /^tag_set\[1\]: .*NUL/],
    ['link', { chunk_html: 'x', link: 'https://e.com/\u0000' }, /^link: .*NUL/],
    ['a metadata value', { chunk_html: 'x', metadata: { note: 'a\u0000' } }, /^metadata\.note: .*NUL/],
    ['a metadata key', { chunk_html: 'x', metadata: { 'k\u0000': 1 } }, /^metadata: the key "k\\u0000" contains a NUL/],
    ['a chunk of a batch', [{ chunk_html: 'fine' }, { chunk_html: 'x', group_tracking_ids: ['g\u0000'] }], /^\[1\]\.group_tracking_ids\[0\]: .*NUL/],
  ])('in %s of a chunk: nothing is written', async (_what, body, field) => {
    expectRefused(await send('POST', '/api/chunk', body), field);
    expect(await count('chunks')).toBe(0);
  });

  it('in the names of a group, a dataset and an API key', async () => {
    expectRefused(await send('POST', '/api/chunk_group', { name: 'g\u0000' }), /^name: .*NUL/);
    expect(await count('chunk_groups')).toBe(0);
    const datasets = await count('datasets', { organization_id: organizationId });
    expectRefused(await send('POST', '/api/dataset', { dataset_name: 'd\u0000' }), /^dataset_name: .*NUL/);
    expect(await count('datasets', { organization_id: organizationId })).toBe(datasets);
    const keys = await count('api_keys', { organization_id: organizationId });
    expectRefused(await send('POST', '/api/organization/api_key', { name: 'k\u0000', role: 0 }), /^name: .*NUL/);
    expect(await count('api_keys', { organization_id: organizationId })).toBe(keys);
  });

  it('in a search query and its filters', async () => {
    expectRefused(await send('POST', '/api/chunk/search', { query: 'a\u0000', search_type: 'fulltext' }), /^query: .*NUL/);
    const filters = { must: [{ field: 'tag_set', match_any: ['t\u0000'] }] };
    expectRefused(await send('POST', '/api/chunk/search', { query: 'a', search_type: 'fulltext', filters }), /^filters\.must\[0\]\.match_any\[0\]: .*NUL/);
    await service.services.deferred.flush();
    expect(await count('search_queries')).toBe(0);
  });

  it('in split_delimiters of a file upload, as JSON and as a form field', async () => {
    const base64 = Buffer.from('one. two.').toString('base64');
    expectRefused(await send('POST', '/api/file', { base64_file: base64, file_name: 'a.txt', split_delimiters: ['.\u0000'] }), /^split_delimiters\[0\]: .*NUL/);
    const form = new FormData();
    form.append('split_delimiters', JSON.stringify(['.\u0000']));
    form.append('file', new Blob(['one. two.']), 'a.txt');
    const response = await fetch(`${service.url}/api/file`, { method: 'POST', headers: headers(), body: form });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/^split_delimiters\[0\]: .*NUL/);
    expect(await count('files')).toBe(0);
  });

  it('in a path parameter and a query parameter', async () => {
    expectRefused(await send('GET', '/api/chunk/tracking_id/%00'), /^tracking_id \(in the path\): .*NUL/);
    expectRefused(await send('GET', '/api/chunk_group/tracking_id/a%00b'), /^tracking_id \(in the path\): .*NUL/);
    expectRefused(await send('GET', '/api/organization/api_key?cursor=%00'), /^cursor \(in the query\): .*NUL/);
  });
});

describe('a lone surrogate is refused', () => {
  it('in metadata: nothing is written', async () => {
    expectRefused(await sendRaw('POST', '/api/chunk', '{"chunk_html":"x","metadata":{"name":"\\ud800"}}'), /^metadata\.name: .*lone UTF-16 surrogate/);
    expect(await count('chunks')).toBe(0);
  });

  it('in a search query, which then leaves the analytics of the other searches whole', async () => {
    expectRefused(await sendRaw('POST', '/api/chunk/search', '{"query":"tea \\udc00","search_type":"fulltext"}'), /^query: .*lone UTF-16 surrogate/);
    // A pair is one character, not a lone surrogate.
    expect((await sendRaw('POST', '/api/chunk/search', '{"query":"tea \\ud83c\\udf75","search_type":"fulltext"}')).status).toBe(200);
    expect((await send('POST', '/api/chunk/search', { query: 'coffee', search_type: 'fulltext' })).status).toBe(200);
    await service.services.deferred.flush();
    expect(await db()('search_queries').where({ dataset_id: datasetId }).orderBy('query').pluck('query')).toEqual(['coffee', 'tea 🍵']);
  });
});

describe('page numbers are held to the contract range', () => {
  const past = '9223372036854775808';
  it.each([
    ['GET', `/api/crawl?page=${past}`, undefined, /page must be <= 2147483647/],
    ['POST', '/api/dataset/get_all_tags', { page: Number(past) }, /page must be <= 2147483647/],
    ['POST', '/api/dataset/events', { page: Number(past) }, /page must be <= 2147483647/],
    ['GET', `/api/chunk_group/tracking_id/x/${past}`, undefined, /page must be <= 2147483647/],
  ])('%s %s', async (method, path, body, message) => {
    expectRefused(await send(method, path, body), message);
  });

  it('GET /api/dataset/files/{dataset_id}/{page}', async () => {
    expectRefused(await send('GET', `/api/dataset/files/${datasetId}/${past}`), /page must be <= 2147483647/);
  });
});

describe('an int64 must be an integer a number holds exactly (up to 2^53)', () => {
  const past = 2 ** 63; // as a double, indistinguishable from 2^63 − 1
  it.each([
    ['POST', '/api/chunk/count', { query: 'x', search_type: 'bm25', limit: past }, /limit must match format "int64"/],
    [
      'POST',
      '/api/chunk/search',
      { query: 'x', search_type: 'bm25', sort_options: { sort_by: { field: 'num_value', prefetch_amount: past } } },
      /prefetch_amount must match format "int64"/,
    ],
    ['POST', '/api/organization/api_key', { name: 'k', role: 0, default_params: { page_size: 2 ** 53 } }, /page_size must match format "int64"/],
  ])('%s %s', async (method, path, body, message) => {
    expectRefused(await send(method, path, body), message);
  });

  it('takes the largest one', async () => {
    const reply = await send('POST', '/api/chunk/count', { query: 'x', search_type: 'bm25', limit: Number.MAX_SAFE_INTEGER });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  });
});

describe('numbers must be finite', () => {
  it.each([
    ['/api/dataset/scroll_files?page_size=Infinity', /^page_size \(in the query\): "Infinity" is not a finite number/],
    ['/api/organization/api_key?limit=Infinity', /^limit \(in the query\): "Infinity" is not a finite number/],
    ['/api/organization/api_key?limit=-Infinity', /^limit \(in the query\): "-Infinity" is not a finite number/],
  ])('GET %s', async (path, message) => {
    expectRefused(await send('GET', path), message);
  });

  it('a page of 1e400 in the path', async () => {
    expectRefused(await send('GET', `/api/dataset/files/${datasetId}/1e400`), /^page \(in the path\): "1e400" is not a finite number/);
  });

  it('1e400 in JSON (which parses as Infinity): nothing is written', async () => {
    expectRefused(await sendRaw('POST', '/api/chunk', '{"chunk_html":"x","metadata":{"big":1e400}}'), /^metadata\.big: the number is out of range/);
    expectRefused(await sendRaw('POST', '/api/chunk', '{"chunk_html":"x","num_value":-1e400}'), /^num_value: the number is out of range/);
    expect(await count('chunks')).toBe(0);
  });
});

describe('nesting is bounded', () => {
  it(`takes metadata ${MAX_DEPTH} levels deep, counting the body`, async () => {
    const reply = await sendRaw('POST', '/api/chunk', `{"chunk_html":"deep","tracking_id":"deep","metadata":${nested(MAX_DEPTH - 1)}}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    await send('DELETE', '/api/chunk/tracking_id/deep');
  });

  it.each([MAX_DEPTH, 2_000, 10_000])('refuses metadata %i levels deep: nothing is written', async (levels) => {
    const before = await count('chunks');
    expectRefused(
      await sendRaw('POST', '/api/chunk', `{"chunk_html":"x","metadata":${nested(levels)}}`),
      new RegExp(`^metadata: nested more than ${MAX_DEPTH} levels`),
    );
    expect(await count('chunks')).toBe(before);
  });

  it('refuses default_params 10,000 levels deep on a new key', async () => {
    const keys = await count('api_keys', { organization_id: organizationId });
    const body = `{"name":"deep","role":0,"default_params":{"filters":${nested(10_000)}}}`;
    const reply = await service.request('POST', '/api/organization/api_key', { headers: headers({ 'content-type': 'application/json' }), rawBody: body });
    expectRefused(reply, /^default_params: nested more than/);
    expect(await count('api_keys', { organization_id: organizationId })).toBe(keys);
  });
});

describe('identifiers, tags, names and queries have declared lengths', () => {
  const mb = 'x'.repeat(1024 ** 2);
  it.each([
    ['a 1 MB tracking_id', { chunk_html: 'x', tracking_id: mb }, /tracking_id must NOT have more than 512 characters/],
    ['a 1 MB tag', { chunk_html: 'x', tag_set: [mb] }, /tag_set\/0 must NOT have more than 512 characters/],
  ])('%s: nothing is written', async (_what, body, message) => {
    expectRefused(await send('POST', '/api/chunk', body), message);
    expect(await count('chunks')).toBe(0);
  });

  it('a tracking id of 512 characters, some outside the BMP, fits the index', async () => {
    const trackingId = '𝓣'.repeat(511) + 'x';
    const reply = await send('POST', '/api/chunk', { chunk_html: 'x', tracking_id: trackingId });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect((await send('GET', `/api/chunk/tracking_id/${encodeURIComponent(trackingId)}`)).status).toBe(200);
    expectRefused(await send('GET', `/api/chunk/tracking_id/${'y'.repeat(513)}`), /tracking_id must NOT have more than 512 characters/);
    await send('DELETE', `/api/chunk/tracking_id/${encodeURIComponent(trackingId)}`);
  });

  it('a group name over 255 characters', async () => {
    expectRefused(await send('POST', '/api/chunk_group', { name: 'n'.repeat(256) }), /name must NOT have more than 255 characters/);
    expect(await count('chunk_groups')).toBe(0);
  });

  it('a 150,000-word query is refused at once by every search that takes one', async () => {
    const query = 'word '.repeat(150_000);
    for (const [path, body] of [
      ['/api/chunk/search', { query, search_type: 'fulltext' }],
      ['/api/chunk/autocomplete', { query, search_type: 'fulltext' }],
      ['/api/chunk/count', { query, search_type: 'fulltext' }],
      ['/api/chunk_group/group_oriented_search', { query, search_type: 'fulltext' }],
      ['/api/chunk/search', { query: [{ query, weight: 1 }], search_type: 'fulltext' }],
      ['/api/chunk/search', { query: 'tea', search_type: 'fulltext', sort_options: { sort_by: { rerank_type: 'bm25', rerank_query: query } } }],
    ] as const) {
      const started = Date.now();
      expectRefused(await send('POST', path, body), /query.* must NOT have more than 8000 characters/);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('more than 10 weighted queries', async () => {
    const query = Array.from({ length: 11 }, (_, i) => ({ query: `q${i}`, weight: 1 }));
    expectRefused(await send('POST', '/api/chunk/search', { query, search_type: 'fulltext' }), /query must NOT have more than 10 items/);
  });
});

describe('a request without the body its operation requires', () => {
  it.each([
    ['no body at all', {}],
    ['a JSON content type and no bytes', { 'content-type': 'application/json' }],
  ])('%s: 400, not an undeclared 415', async (_what, extra) => {
    expectRefused(await service.request('POST', '/api/chunk', { headers: headers(extra) }), /^the request body is required \(application\/json\)/);
    expectRefused(
      await service.request('POST', '/api/file', { headers: headers(extra) }),
      /^the request body is required \(application\/json or multipart\/form-data\)/,
    );
    expect(await count('chunks')).toBe(0);
  });

  it('a body without a content type', async () => {
    const response = await fetch(`${service.url}/api/chunk`, { method: 'POST', headers: headers(), body: new Blob(['{"chunk_html":"x"}']) });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/^Content-Type: say what the body is/);
  });

  it('a body of a media type the operation does not take: the declared 415', async () => {
    const reply = await service.request('POST', '/api/chunk', { headers: headers({ 'content-type': 'text/plain' }), rawBody: 'chunk' });
    expectRefused(reply, /^unsupported media type text\/plain/, 415);
    expect(await count('chunks')).toBe(0);
  });

  it('an operation whose body is optional still answers without one', async () => {
    expect((await send('POST', `/api/organization/usage/${organizationId}`)).status).toBe(200);
  });
});

describe('an undeclared method', () => {
  it('gets 405 with the methods the path takes', async () => {
    const { status, allow, body } = await new Promise<{ status?: number; allow?: string; body: string }>((resolve, reject) => {
      const request = http.request(`${service.url}/api/chunk/tracking_id/x`, { method: 'TRACE' }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, allow: response.headers.allow, body: text }));
      });
      request.on('error', reject);
      request.end();
    });
    expect(status).toBe(405);
    expect(allow?.split(', ').sort()).toEqual(['DELETE', 'GET']);
    expect(JSON.parse(body).message).toMatch(/TRACE/);
  });
});

describe('multipart uploads', () => {
  async function upload(parts: [string, string | Blob, string?][]) {
    const form = new FormData();
    for (const [name, value, fileName] of parts) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, value, fileName);
    }
    const response = await fetch(`${service.url}/api/file`, { method: 'POST', headers: headers(), body: form });
    return { status: response.status, body: await response.json() };
  }

  it('refuses a second file part, naming it: no file is kept', async () => {
    expectRefused(
      await upload([
        ['file', new Blob(['one.']), 'a.txt'],
        ['file', new Blob(['two.']), 'b.txt'],
      ]),
      /^file: a second file part/,
    );
    expectRefused(
      await upload([
        ['file', new Blob(['one.']), 'a.txt'],
        ['extra', new Blob(['two.']), 'b.txt'],
      ]),
      /^extra: a second file part/,
    );
    expect(await count('files')).toBe(0);
  });

  it('refuses an option field the contract does not know, before or after the file', async () => {
    expectRefused(
      await upload([
        ['tag_sett', '["a"]'],
        ['file', new Blob(['one.']), 'a.txt'],
      ]),
      /^tag_sett: not an option of an upload/,
    );
    expectRefused(
      await upload([
        ['file', new Blob(['one.']), 'a.txt'],
        ['colour', 'red'],
      ]),
      /^colour: not an option of an upload/,
    );
    expect(await count('files')).toBe(0);
  });

  it('still takes known options followed by one file', async () => {
    const reply = await upload([
      ['tag_set', '["a"]'],
      ['file', new Blob(['one. two.']), 'a.txt'],
    ]);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.file_metadata.tag_set).toEqual(['a']);
  });
});

describe('headers over the size limit, once answerClientError is wired to the server', () => {
  it('get 431 with {message}', async () => {
    const server = http.createServer((_req, res) => res.end('{}'));
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/api/health`, { headers: { 'x-big': 'b'.repeat(20_000) } });
      expect(response.status).toBe(431);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect((await response.json()).message).toMatch(/headers are over the size limit/);
    } finally {
      server.close();
    }
  });
});

describe('an empty tracking id is a tracking id', () => {
  it('a second chunk with tracking_id "" is kept as the first, not a 500', async () => {
    const first = await send('POST', '/api/chunk', { chunk_html: 'first', tracking_id: '' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await send('POST', '/api/chunk', { chunk_html: 'second', tracking_id: '' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.chunk_metadata.id).toBe(first.body.chunk_metadata.id);
    expectRefused(
      await send('POST', '/api/chunk', [
        { chunk_html: 'a', tracking_id: '' },
        { chunk_html: 'b', tracking_id: '' },
      ]),
      /^\[1\]\.tracking_id: {2}is also given to chunk 0/,
    );
    await send('DELETE', `/api/chunk/${first.body.chunk_metadata.id}`);
  });
});
