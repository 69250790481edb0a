// The File operations over HTTP: uploads (base64 JSON and streamed multipart), the signed links
// (download, CSV/JSONL upload), crawled pages, reading, listing and deleting files, with bad input,
// limits and roles. After every refused or failed upload, no row and no stored bytes are left.
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChunk,
  createDataset,
  createOrganization,
  createOrganizationApiKey,
  createPresignedUrlForCsvJsonl,
  deleteFileHandler,
  getDatasetFilesAndGroupIdsHandler,
  getFileHandler,
  getFilesCursorHandler,
  uploadFileHandler,
  uploadHtmlPage,
} from '../../sdk/src/generated/sdk.gen.js';
import type { FileRecord } from '../../sdk/src/generated/types.gen.js';
import { crawlWebhookSecret, signedLink } from '../../server/domain/files/links.js';
import { checkResponse } from '../support/contract.js';
import { createActivities } from '../../workflows/activities/index.js';
import { seedCrawl, seedGroup } from '../support/seed.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

const LIMIT = 1024 ** 2; // FILE_UPLOAD_LIMIT of the service under test: 1 MiB
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

let service: TestService;
let orgId: string;
let datasetId: string;
const keys = { read: '', admin: '' };
const db = () => service.services.store.db;
const client = (key = ADMIN_KEY) => service.client(key);
const ds = (id = datasetId) => ({ 'SVC-Dataset': id });

async function newKey(role: 0 | 1): Promise<string> {
  const { data } = await createOrganizationApiKey({ client: client(), headers: { 'SVC-Organization': orgId }, body: { name: `role ${role}`, role } });
  return data!.api_key;
}

async function newDataset(organizationId = orgId): Promise<string> {
  const { data, error } = await createDataset({ client: client(), headers: { 'SVC-Organization': organizationId }, body: { dataset_name: 'files' } });
  if (!data) throw new Error(JSON.stringify(error));
  return data.id;
}

/** Stored objects under DATA_DIR/files, and temporary files of puts under way or left behind. */
async function storedObjects(): Promise<{ objects: number; temporaries: number }> {
  const root = path.join(service.services.config.dataDir, 'files');
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile());
  const inTemp = (e: (typeof files)[number]) => path.relative(root, path.join(e.parentPath, e.name)).startsWith('.tmp');
  return { objects: files.filter((e) => !inTemp(e)).length, temporaries: files.filter(inTemp).length };
}

async function fileRows(): Promise<number> {
  const [{ n }] = await db()('files').count<{ n: string }[]>('* as n');
  return Number(n);
}

/** Runs `attempt` and checks it left no file row and no stored bytes behind. */
async function leavesNothing(attempt: () => Promise<void>): Promise<void> {
  const rows = await fileRows();
  const stored = await storedObjects();
  await attempt();
  expect(await fileRows()).toBe(rows);
  expect(await storedObjects()).toEqual({ objects: stored.objects, temporaries: 0 });
}

/** A request whose response is checked against the contract, like every other test's. */
async function send(method: string, url: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url.startsWith('http') ? url : service.url + url, init);
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json');
  const body = json && text ? JSON.parse(text) : text;
  checkResponse(
    method,
    url.startsWith('http') ? url : service.url + url,
    response.status,
    json ? body : text || undefined,
    response.headers.get('content-type'),
  );
  return { status: response.status, body, headers: response.headers };
}

/** A multipart upload to POST /api/file; `parts` in order, a Blob for the file. */
function multipart(parts: [string, string | Blob, string?][], opts: { key?: string; dataset?: string } = {}) {
  const form = new FormData();
  for (const [name, value, fileName] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, fileName);
  }
  return send('POST', '/api/file', { method: 'POST', headers: { authorization: opts.key ?? ADMIN_KEY, 'SVC-Dataset': opts.dataset ?? datasetId }, body: form });
}

/** A multipart body streamed from a generator, with no Content-Length (chunked), as a large upload is sent. */
function streamedMultipart(fileBytes: number, opts: { fieldsBefore?: Record<string, string>; fieldsAfter?: Record<string, string> } = {}) {
  const boundary = `----svc${randomUUID()}`;
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const encoder = new TextEncoder();
  const line = encoder.encode('streamed line of text for the upload test\n'); // 42 bytes
  let sent = 0;
  let phase = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (phase === 0) {
        const head = Object.entries(opts.fieldsBefore ?? {})
          .map(([k, v]) => field(k, v))
          .join('');
        controller.enqueue(
          encoder.encode(`${head}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`),
        );
        phase = 1;
      } else if (phase === 1) {
        const n = Math.min(64 * 1024, fileBytes - sent);
        const chunk = new Uint8Array(n);
        for (let i = 0; i < n; i++) chunk[i] = line[(sent + i) % line.length];
        sent += n;
        controller.enqueue(chunk);
        if (sent >= fileBytes) phase = 2;
      } else {
        const tail = Object.entries(opts.fieldsAfter ?? {})
          .map(([k, v]) => field(k, v))
          .join('');
        controller.enqueue(encoder.encode(`\r\n${tail}--${boundary}--\r\n`));
        controller.close();
      }
    },
  });
  return send('POST', '/api/file', {
    method: 'POST',
    headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  });
}

/** `bytes` bytes as a stream of 64 KiB pieces, sent without a Content-Length. */
function chunkedBody(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const n = Math.min(64 * 1024, bytes - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(97));
    },
  });
}

function base64Upload(body: Record<string, unknown>, opts: { key?: string; dataset?: string } = {}) {
  return service.request('POST', '/api/file', { headers: { authorization: opts.key ?? ADMIN_KEY, 'SVC-Dataset': opts.dataset ?? datasetId }, body });
}

/** Waits until the file's ingestion has ended; its final status. */
async function ingestionEnd(fileId: string): Promise<string> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const { status } = await db()('files').where({ id: fileId }).first('status');
    if (status === 'completed' || status === 'failed') return status;
    if (Date.now() > deadline) throw new Error(`file ${fileId} is still ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The workflow type a durable run was started as: from the job rows, or from Temporal. */
async function workflowTypeOf(workflowId: string): Promise<string | undefined> {
  const config = service.services.config.workflows;
  if (config.kind === 'in-process') return (await db()('jobs').where({ id: workflowId }).first('workflow'))?.workflow;
  const connection = await Connection.connect({ address: config.address });
  try {
    const description = await new Client({ connection, namespace: config.namespace }).workflow.getHandle(workflowId).describe();
    return description.type;
  } finally {
    await connection.close();
  }
}

async function storedBytes(fileId: string): Promise<Buffer> {
  const { data } = await getFileHandler({ client: client(), headers: ds(), path: { file_id: fileId } });
  const response = await fetch(data!.s3_url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

beforeAll(async () => {
  service = await startTestService({ FILE_UPLOAD_LIMIT: '1mb', JSON_BODY_LIMIT: '2mb' });
  const { data } = await createOrganization({ client: client(), body: { name: 'Files Inc' } });
  orgId = data!.id;
  datasetId = await newDataset();
  keys.read = await newKey(0);
  keys.admin = await newKey(1);
});
afterAll(async () => {
  await service?.stop();
});

describe('POST /api/file with a base64 JSON body', () => {
  it('stores the file, records it pending with its options, and starts its ingestion', async () => {
    const text = 'Refunds are paid within 14 days.\nShipping takes 3 days.\n';
    const { data, response, error } = await uploadFileHandler({
      client: client(keys.admin),
      headers: ds(),
      body: {
        base64_file: Buffer.from(text).toString('base64'),
        file_name: 'policy.txt',
        tag_set: ['policy', 'support'],
        metadata: { team: 'support' },
        link: 'https://example.com/policy',
        time_stamp: '2026-03-01T10:00:00+02:00',
        description: 'the refund policy',
        target_splits_per_chunk: 5,
        split_delimiters: ['\n'],
        group_tracking_id: 'policy-file',
      },
    });
    expect(response.status, JSON.stringify(error)).toBe(200);
    const file = data!.file_metadata;
    expect(file).toMatchObject({
      dataset_id: datasetId,
      file_name: 'policy.txt',
      size: Buffer.byteLength(text),
      tag_set: ['policy', 'support'],
      metadata: { team: 'support' },
      link: 'https://example.com/policy',
      time_stamp: '2026-03-01 08:00:00.000',
    });
    expect(file.created_at).toMatch(TIMESTAMP);
    const row = await db()('files').where({ id: file.id }).first();
    expect(['pending', 'processing', 'completed', 'failed']).toContain(row.status);
    expect(row.mime_type).toBe('text/plain');
    expect(row.storage_key).toMatch(new RegExp(`^${datasetId}/${file.id}-`));
    expect(row.ingest_options).toEqual({
      tag_set: ['policy', 'support'],
      metadata: { team: 'support' },
      link: 'https://example.com/policy',
      time_stamp: '2026-03-01T10:00:00+02:00',
      description: 'the refund policy',
      target_splits_per_chunk: 5,
      split_delimiters: ['\n'],
      group_tracking_id: 'policy-file',
      // The contract's defaults, filled in by request validation.
      create_chunks: true,
      rebalance_chunks: true,
      split_avg: false,
    });
    // The ingestion runs as durable work under the file's readable workflow id.
    expect(await workflowTypeOf(`ingest-file-${file.id}`)).toBe('ingestFile');
    expect((await storedBytes(file.id)).toString()).toBe(text);
  });

  it('accepts the URL-safe alphabet without padding', async () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xfe, 0x10]);
    const reply = await base64Upload({ base64_file: bytes.toString('base64url'), file_name: 'blob.bin' });
    expect(reply.status).toBe(200);
    expect(await storedBytes(reply.body.file_metadata.id)).toEqual(bytes);
  });

  it.each([
    [{ base64_file: '', file_name: 'empty.txt' }, /base64_file: the file is empty/],
    [{ base64_file: 'not base64!', file_name: 'x.txt' }, /base64_file: is not valid base64/],
    [{ base64_file: 'QUJD=====', file_name: 'x.txt' }, /base64_file: is not valid base64/],
    [{ base64_file: 'QUJD', file_name: '   ' }, /file_name: give the name/],
    [{ base64_file: 'QUJD' }, /file_name/],
    [{ file_name: 'x.txt' }, /base64_file/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', time_stamp: 'yesterday' }, /time_stamp: yesterday is not an ISO 8601/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', tag_set: ['a,b'] }, /tag_set\[0\]: "a,b" contains a comma/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', webhook_url: 'ftp://example.com/hook' }, /webhook_url: .* not an http or https URL/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', webhook_url: 'not a url' }, /webhook_url/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', target_splits_per_chunk: -1 }, /target_splits_per_chunk/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', metadata: [1, 2] }, /metadata/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', pdf2md_options: { use_pdf2md_ocr: true } }, /pdf2md_options.use_pdf2md_ocr/],
    [{ base64_file: 'QUJD', file_name: 'x.txt', chunkr_create_task_req_payload: {} }, /chunkr_create_task_req_payload/],
  ])('refuses %j with 400 naming the field, keeping nothing', async (body, message) => {
    await leavesNothing(async () => {
      const reply = await base64Upload(body);
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(message);
    });
  });

  it('refuses a JSON body over the JSON limit with 413, pointing to multipart', async () => {
    await leavesNothing(async () => {
      const reply = await base64Upload({ base64_file: Buffer.alloc(2 * 1024 ** 2).toString('base64'), file_name: 'big.bin' });
      expect(reply.status).toBe(413);
      expect(reply.body.message).toMatch(/over the limit of .* multipart\/form-data/);
    });
  });

  it('refuses a decoded file over the upload limit with 413', async () => {
    await leavesNothing(async () => {
      const reply = await base64Upload({ base64_file: Buffer.alloc(LIMIT + 1, 7).toString('base64'), file_name: 'big.bin' });
      expect(reply.status).toBe(413);
      expect(reply.body.message).toBe(`base64_file: the file is over the upload limit of ${LIMIT} bytes (1 MB)`);
    });
  });

  it('needs the admin role and a dataset of the caller', async () => {
    await leavesNothing(async () => {
      expect((await base64Upload({ base64_file: 'QUJD', file_name: 'x.txt' }, { key: keys.read })).status).toBe(403);
      expect((await base64Upload({ base64_file: 'QUJD', file_name: 'x.txt' }, { dataset: randomUUID() })).status).toBe(404);
      const other = (await createOrganization({ client: client(), body: { name: 'Other' } })).data!.id;
      const foreign = await newDataset(other);
      expect((await base64Upload({ base64_file: 'QUJD', file_name: 'x.txt' }, { key: keys.admin, dataset: foreign })).status).toBe(404);
    });
  });
});

describe('POST /api/file as multipart/form-data', () => {
  it('streams the file part to storage and reads the option fields by their contract types', async () => {
    const bytes = Buffer.from('# Title\n\nSome markdown with ünïcödé.\n');
    const reply = await multipart([
      ['tag_set', JSON.stringify(['docs'])],
      ['metadata', JSON.stringify({ source: 'form' })],
      ['create_chunks', 'true'],
      ['target_splits_per_chunk', '3'],
      ['file', new Blob([bytes], { type: 'application/octet-stream' }), 'notes – ü.md'],
    ]);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const file: FileRecord = reply.body.file_metadata;
    expect(file).toMatchObject({ file_name: 'notes – ü.md', size: bytes.length, tag_set: ['docs'], metadata: { source: 'form' } });
    const row = await db()('files').where({ id: file.id }).first();
    expect(row.mime_type).toBe('text/markdown');
    expect(row.ingest_options).toEqual({
      tag_set: ['docs'],
      metadata: { source: 'form' },
      create_chunks: true,
      target_splits_per_chunk: 3,
      rebalance_chunks: true,
      split_avg: false,
    });
    expect(await storedBytes(file.id)).toEqual(bytes);
  });

  it("takes file_name from its field before the part's own name", async () => {
    const reply = await multipart([
      ['file_name', 'renamed.csv'],
      ['file', new Blob(['a,b\n1,2\n']), 'original.txt'],
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body.file_metadata.file_name).toBe('renamed.csv');
    expect((await db()('files').where({ id: reply.body.file_metadata.id }).first()).mime_type).toBe('text/csv');
  });

  it('streams a chunked upload just under the limit', async () => {
    const reply = await streamedMultipart(LIMIT - 10, { fieldsBefore: { tag_set: '["big"]' } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.file_metadata).toMatchObject({ size: LIMIT - 10, tag_set: ['big'], file_name: 'big.txt' });
    const bytes = await storedBytes(reply.body.file_metadata.id);
    expect(bytes.length).toBe(LIMIT - 10);
    expect(bytes.subarray(0, 42).toString()).toBe('streamed line of text for the upload test\n');
  });

  it('refuses a streamed file over the limit with 413 once the limit is passed, keeping nothing', async () => {
    await leavesNothing(async () => {
      const reply = await streamedMultipart(LIMIT + 64 * 1024);
      expect(reply.status).toBe(413);
      expect(reply.body.message).toBe(`file: the file is over the upload limit of ${LIMIT} bytes (1 MB)`);
    });
  });

  it('refuses a declared length over the limit before reading the body', async () => {
    await leavesNothing(async () => {
      const reply = await declaredOversizeUpload(service, LIMIT + 2 * 1024 ** 2);
      expect(reply.status).toBe(413);
      expect(reply.sentBytes).toBeLessThan(1024 ** 2);
      expect(JSON.parse(reply.body).message).toMatch(/^file: the upload of \d+ bytes is over the upload limit of 1048576 bytes$/);
    });
  });

  it.each([
    ['an empty file', [['file', new Blob([]), 'empty.txt']], /file: the file is empty/],
    ['no file part', [['file_name', 'x.txt']], /file/],
    ['a file part under another name', [['upload', new Blob(['abc']), 'x.txt']], /upload: the file part must be named file/],
    [
      'a boolean field that is not one',
      [
        ['create_chunks', 'maybe'],
        ['file', new Blob(['abc']), 'x.txt'],
      ],
      /create_chunks/,
    ],
    [
      'an array field that is not JSON',
      [
        ['tag_set', 'a, b'],
        ['file', new Blob(['abc']), 'x.txt'],
      ],
      /tag_set/,
    ],
    [
      'a bad time stamp',
      [
        ['time_stamp', 'soon'],
        ['file', new Blob(['abc']), 'x.txt'],
      ],
      /time_stamp: soon/,
    ],
  ] as [string, [string, string | Blob, string?][], RegExp][])('refuses %s with 400, keeping nothing', async (_what, parts, message) => {
    await leavesNothing(async () => {
      const reply = await multipart(parts);
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(message);
    });
  });

  it('refuses an option field sent after the file part, keeping nothing', async () => {
    await leavesNothing(async () => {
      const reply = await streamedMultipart(1000, { fieldsAfter: { tag_set: '["late"]' } });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toBe('tag_set: option fields must come before the file part');
    });
  });

  it('refuses a malformed body with 400, keeping nothing', async () => {
    await leavesNothing(async () => {
      const boundary = 'xyz';
      const reply = await send('POST', '/api/file', {
        method: 'POST',
        headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\nthe body stops here`,
      });
      expect(reply.status).toBe(400);
      expect(reply.body.message).toMatch(/^file: the upload did not complete|multipart body is malformed/);
    });
  });

  it('needs the admin role before reading the file', async () => {
    await leavesNothing(async () => {
      const reply = await multipart([['file', new Blob(['abc']), 'x.txt']], { key: keys.read });
      expect(reply.status).toBe(403);
    });
  });
});

describe('the upload limit of 1 GB', () => {
  let defaults: TestService;
  beforeAll(async () => {
    defaults = await startTestService();
  });
  afterAll(async () => {
    await defaults?.stop();
  });

  it('is the default, and a declared length past it is refused while the client is still sending', async () => {
    expect(defaults.services.config.fileUploadLimit).toBe(1024 ** 3);
    const org = await defaults.request('POST', '/api/organization', { headers: { authorization: ADMIN_KEY }, body: { name: 'Big' } });
    const dataset = await defaults.request('POST', '/api/dataset', {
      headers: { authorization: ADMIN_KEY, 'SVC-Organization': org.body.id },
      body: { dataset_name: 'big' },
    });
    const reply = await declaredOversizeUpload(defaults, 1024 ** 3 + 2 * 1024 ** 2, dataset.body.id);
    expect(reply.status).toBe(413);
    expect(reply.sentBytes).toBeLessThan(1024 ** 2);
    expect(JSON.parse(reply.body).message).toMatch(/over the upload limit of 1073741824 bytes/);
    expect(Number((await defaults.services.store.db('files').count<{ n: string }[]>('* as n'))[0].n)).toBe(0);
  });
});

/**
 * Starts a multipart upload that declares `declared` bytes and sends them slowly, a few KiB at a
 * time, until the service answers; returns the answer and how much had been sent by then.
 */
function declaredOversizeUpload(target: TestService, declared: number, dataset = datasetId): Promise<{ status: number; body: string; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL('/api/file', target.url);
    const boundary = 'declared-size';
    const request = http.request(url, {
      method: 'POST',
      headers: {
        authorization: ADMIN_KEY,
        'SVC-Dataset': dataset,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(declared),
      },
    });
    let sentBytes = 0;
    const chunk = Buffer.alloc(4096, 'x');
    const timer = setInterval(() => {
      if (sentBytes === 0) {
        const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\n\r\n`);
        request.write(head);
        sentBytes += head.length;
      }
      request.write(chunk);
      sentBytes += chunk.length;
    }, 20);
    request.on('response', (response) => {
      clearInterval(timer);
      const parts: Buffer[] = [];
      response.on('data', (d: Buffer) => parts.push(d));
      response.on('end', () => {
        request.destroy();
        const body = Buffer.concat(parts).toString();
        checkResponse('POST', url.toString(), response.statusCode!, JSON.parse(body), response.headers['content-type'] ?? null);
        resolve({ status: response.statusCode!, body, sentBytes });
      });
    });
    request.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
  });
}

describe('the plan and the durable work', () => {
  it("refuses with 426 an upload past the plan's file storage, keeping nothing", async () => {
    const [plan] = await db()('plans')
      .insert({ name: `tiny-${randomUUID()}`, chunk_count: 1000, dataset_count: 10, file_storage: 2000, message_count: 10, user_count: 10 })
      .returning('id');
    const org = (await createOrganization({ client: client(), body: { name: 'Tiny' } })).data!.id;
    await db()('subscriptions').where({ organization_id: org }).update({ plan_id: plan.id });
    const tiny = await newDataset(org);
    const first = await base64Upload({ base64_file: Buffer.alloc(1500, 1).toString('base64'), file_name: 'a.bin' }, { dataset: tiny });
    expect(first.status).toBe(200);
    await leavesNothing(async () => {
      const second = await base64Upload({ base64_file: Buffer.alloc(600, 1).toString('base64'), file_name: 'b.bin' }, { dataset: tiny });
      expect(second.status).toBe(426);
      expect(second.body.message).toMatch(/allows 2000 bytes of file storage; the organization has 1500 and this request adds 600/);
      const streamed = await multipart([['file', new Blob([Buffer.alloc(600, 1)]), 'c.bin']], { dataset: tiny });
      expect(streamed.status).toBe(426);
    });
    // Once full, an upload is refused before its bytes are read.
    expect((await base64Upload({ base64_file: Buffer.alloc(500, 1).toString('base64'), file_name: 'd.bin' }, { dataset: tiny })).status).toBe(200);
    await leavesNothing(async () => {
      const full = await multipart([['file', new Blob([Buffer.alloc(10, 1)]), 'e.bin']], { dataset: tiny });
      expect(full.status).toBe(426);
      expect(full.body.message).toMatch(/allows 2000 bytes of file storage and the organization has used 2000/);
    });
  });

  it('answers 503 and keeps nothing when the ingestion cannot be started', async () => {
    const workflows = service.services.workflows;
    const run = workflows.run;
    workflows.run = async () => {
      throw new Error('the workflow engine is down');
    };
    try {
      await leavesNothing(async () => {
        const json = await base64Upload({ base64_file: 'QUJD', file_name: 'x.txt' });
        expect(json.status).toBe(503);
        expect(json.body.message).toMatch(/could not be handed to its ingestion.*the workflow engine is down/);
        const form = await multipart([['file', new Blob(['abc']), 'x.txt']]);
        expect(form.status).toBe(503);
      });
    } finally {
      workflows.run = run;
    }
  });
});

describe('GET /api/file/{file_id} and its download link', () => {
  let fileId: string;
  const text = '<html><body><h1>Hello</h1></body></html>';
  beforeAll(async () => {
    const reply = await base64Upload({ base64_file: Buffer.from(text).toString('base64'), file_name: 'page.html', tag_set: ['web'] });
    fileId = reply.body.file_metadata.id;
  });

  it('answers the record with a signed link that streams the bytes with their type', async () => {
    const { data, response } = await getFileHandler({ client: client(keys.read), headers: ds(), path: { file_id: fileId } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: fileId, file_name: 'page.html', size: text.length, tag_set: ['web'], dataset_id: datasetId });
    expect(data!.s3_url.startsWith(`${service.url}/api/file/${fileId}/content?`)).toBe(true);
    const download = await fetch(data!.s3_url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toMatch(/^text\/html/);
    expect(download.headers.get('content-length')).toBe(String(text.length));
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''page.html`);
    expect(await download.text()).toBe(text);
  });

  it('overrides the content type when asked, inside the signature', async () => {
    const { data } = await getFileHandler({ client: client(), headers: ds(), path: { file_id: fileId }, query: { content_type: 'text/plain' } });
    const download = await fetch(data!.s3_url);
    expect(download.headers.get('content-type')).toMatch(/^text\/plain/);
    const swapped = new URL(data!.s3_url);
    swapped.searchParams.set('content_type', 'application/javascript');
    expect((await send('GET', swapped.toString())).status).toBe(403);
  });

  it('refuses an expired or tampered link', async () => {
    const { data } = await getFileHandler({ client: client(), headers: ds(), path: { file_id: fileId }, query: { ttl: 0 } });
    const expired = await send('GET', data!.s3_url);
    expect(expired.status).toBe(403);
    expect(expired.body.message).toMatch(/the link expired at/);

    const { data: fresh } = await getFileHandler({ client: client(), headers: ds(), path: { file_id: fileId } });
    const url = new URL(fresh!.s3_url);
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const forged = new URL(url);
    forged.searchParams.set(
      'signature',
      url.searchParams.get('signature')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')),
    );
    const otherFile = new URL(url.toString().replace(fileId, randomUUID()));
    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    for (const bad of [longer, forged, otherFile, unsigned]) {
      const reply = await send('GET', bad.toString());
      expect(reply.status, bad.toString()).toBe(403);
      expect(reply.body.message).toMatch(/signature|not signed/);
    }
    // An upload link of the same file does not download it.
    const uploadLink = await signedLink(service.services, 'upload', fileId, new Date(Date.now() + 60_000));
    expect((await send('GET', uploadLink)).status).toBe(403);
  });

  it('answers 404 for a file of another dataset or none', async () => {
    const other = await newDataset();
    expect((await getFileHandler({ client: client(), headers: ds(other), path: { file_id: fileId } })).response.status).toBe(404);
    expect((await getFileHandler({ client: client(), headers: ds(), path: { file_id: randomUUID() } })).response.status).toBe(404);
    const bad = await service.request('GET', `/api/file/${fileId}?ttl=999999999`, { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/ttl/);
  });
});

describe('DELETE /api/file/{file_id}', () => {
  async function fileWithGroup(): Promise<{ fileId: string; groupId: string; chunkIds: string[] }> {
    const reply = await base64Upload({ base64_file: Buffer.from('some text').toString('base64'), file_name: 'd.txt', create_chunks: false });
    const fileId = reply.body.file_metadata.id;
    // A group and chunks as an ingestion makes them, made here through the API.
    const groupId = await seedGroup(db(), datasetId, { file_id: fileId, name: 'd.txt' });
    const { data } = await createChunk({
      client: client(),
      headers: ds(),
      body: [
        { chunk_html: 'one', group_ids: [groupId] },
        { chunk_html: 'two', group_ids: [groupId] },
      ],
    });
    const chunkIds = (data as { chunk_metadata: { id: string }[] }).chunk_metadata.map((c) => c.id);
    return { fileId, groupId, chunkIds };
  }

  it('deletes the file, its bytes and its group, keeping the chunks without delete_chunks', async () => {
    const { fileId, groupId, chunkIds } = await fileWithGroup();
    const before = await storedObjects();
    const { response } = await deleteFileHandler({ client: client(keys.admin), headers: ds(), path: { file_id: fileId }, query: { delete_chunks: false } });
    expect(response.status).toBe(204);
    expect(await db()('files').where({ id: fileId }).first()).toBeUndefined();
    expect(await db()('chunk_groups').where({ id: groupId }).first()).toBeUndefined();
    expect(await db()('chunks').whereIn('id', chunkIds).pluck('id')).toHaveLength(2);
    expect((await storedObjects()).objects).toBe(before.objects - 1);
    expect((await deleteFileHandler({ client: client(), headers: ds(), path: { file_id: fileId }, query: { delete_chunks: false } })).response.status).toBe(
      404,
    );
  });

  it('deletes the chunks too with delete_chunks', async () => {
    const { fileId, chunkIds } = await fileWithGroup();
    const { response } = await deleteFileHandler({ client: client(), headers: ds(), path: { file_id: fileId }, query: { delete_chunks: true } });
    expect(response.status).toBe(204);
    expect(await db()('chunks').whereIn('id', chunkIds).pluck('id')).toEqual([]);
  });

  it('deletes an ingested file with the group and chunks its ingestion made', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} of the ingested file.`).join(' ');
    const reply = await base64Upload({ base64_file: Buffer.from(text).toString('base64'), file_name: 'ingested.txt', target_splits_per_chunk: 10 });
    const fileId = reply.body.file_metadata.id;
    const status = await ingestionEnd(fileId);
    expect(status).toBe('completed');
    const groupIds = await db()('chunk_groups').where({ file_id: fileId }).pluck('id');
    expect(groupIds).toHaveLength(1);
    const chunkIds = await db()('chunk_group_bookmarks').where({ group_id: groupIds[0] }).pluck('chunk_id');
    expect(chunkIds.length).toBeGreaterThan(0);
    const { response } = await deleteFileHandler({ client: client(), headers: ds(), path: { file_id: fileId }, query: { delete_chunks: true } });
    expect(response.status).toBe(204);
    expect(await db()('chunks').whereIn('id', chunkIds).pluck('id')).toEqual([]);
    expect(await db()('chunk_groups').whereIn('id', groupIds).pluck('id')).toEqual([]);
  });

  it('needs delete_chunks, the admin role and a file of the dataset', async () => {
    const { fileId } = await fileWithGroup();
    const missing = await service.request('DELETE', `/api/file/${fileId}`, { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/delete_chunks/);
    expect(
      (await deleteFileHandler({ client: client(keys.read), headers: ds(), path: { file_id: fileId }, query: { delete_chunks: true } })).response.status,
    ).toBe(403);
    const other = await newDataset();
    expect((await deleteFileHandler({ client: client(), headers: ds(other), path: { file_id: fileId }, query: { delete_chunks: true } })).response.status).toBe(
      404,
    );
    expect(await db()('files').where({ id: fileId }).first()).toBeDefined();
  });
});

describe('clearing or deleting a dataset, or deleting its organization', () => {
  /** The objects stored under the dataset's key prefix (its directory under DATA_DIR/files). */
  async function objectsOf(dataset: string): Promise<number> {
    const dir = path.join(service.services.config.dataDir, 'files', dataset);
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
    return entries.filter((e) => e.isFile()).length;
  }

  /** Uploads `n` small text files to the dataset (and waits for their ingestion when asked). */
  async function uploadSome(dataset: string, n: number, wait: boolean): Promise<string[]> {
    const before = await objectsOf(dataset);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const text = `File ${i} of the dataset. It has two sentences.`;
      const reply = await base64Upload({ base64_file: Buffer.from(text).toString('base64'), file_name: `f${i}.txt` }, { dataset });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      ids.push(reply.body.file_metadata.id);
    }
    if (wait) for (const id of ids) expect(await ingestionEnd(id)).toBe('completed');
    expect(await objectsOf(dataset)).toBe(before + n);
    return ids;
  }

  async function waitUntil(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('clearing removes the bytes with the file records, and the dataset takes new files', async () => {
    const dataset = await newDataset();
    const bystander = await newDataset();
    await uploadSome(bystander, 1, false);
    const [first] = await uploadSome(dataset, 3, true);
    // As if an earlier attempt had removed these bytes and crashed before deleting the record.
    const { storage_key } = await db()('files').where({ id: first }).first('storage_key');
    await service.services.storage.remove(storage_key);
    expect((await service.request('PUT', `/api/dataset/clear/${dataset}`, { headers: { authorization: ADMIN_KEY, ...ds(dataset) } })).status).toBe(204);
    await waitUntil(async () => !!(await db()('events').where({ dataset_id: dataset, event_type: 'bulk_chunks_deleted' }).first()), 'the clear to end');
    expect(await db()('files').where({ dataset_id: dataset })).toEqual([]);
    expect(await objectsOf(dataset)).toBe(0);
    expect(await objectsOf(bystander)).toBe(1);
    await uploadSome(dataset, 1, true);
  });

  it('deleting the dataset removes its bytes, even of files still being ingested', async () => {
    const dataset = await newDataset();
    await uploadSome(dataset, 2, true);
    await uploadSome(dataset, 2, false); // whatever their ingestion has reached when the purge starts
    expect((await service.request('DELETE', `/api/dataset/${dataset}`, { headers: { authorization: ADMIN_KEY, ...ds(dataset) } })).status).toBe(204);
    await waitUntil(async () => !(await db()('datasets').where({ id: dataset }).first()), 'the purge to delete the dataset');
    expect(await db()('files').where({ dataset_id: dataset })).toEqual([]);
    // The bytes go in the same step, right after the row.
    await waitUntil(async () => (await objectsOf(dataset)) === 0, 'the purge to remove the bytes', 5_000);
    // The step run again, as a replay after a crash would: it finds everything gone and goes on.
    const { store, lexical, storage } = service.services;
    await expect(createActivities({ store, lexical, storage }).deleteDatasetRow(dataset)).resolves.toBeUndefined();
  });

  it('deleting the organization removes the bytes of every dataset of it', async () => {
    const { data: org } = await createOrganization({ client: client(), body: { name: 'Short-lived' } });
    const first = await newDataset(org!.id);
    const second = await newDataset(org!.id);
    await uploadSome(first, 2, true);
    await uploadSome(second, 1, false);
    expect(
      (await service.request('DELETE', `/api/organization/${org!.id}`, { headers: { authorization: ADMIN_KEY, 'SVC-Organization': org!.id } })).status,
    ).toBe(204);
    await waitUntil(async () => !(await db()('organizations').where({ id: org!.id }).first()), 'the purge of the organization');
    expect(await objectsOf(first)).toBe(0);
    expect(await objectsOf(second)).toBe(0);
  });
});

describe('listing files', () => {
  it("pages a dataset's files newest first, ten a page, with the group made from each", async () => {
    const listed = await newDataset();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const reply = await base64Upload(
        { base64_file: Buffer.from(`file ${i}`).toString('base64'), file_name: `f${i}.txt`, create_chunks: false },
        { dataset: listed },
      );
      ids.push(reply.body.file_metadata.id);
      await db()('files')
        .where({ id: reply.body.file_metadata.id })
        .update({ created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) });
    }
    const groupId = await seedGroup(db(), listed, { file_id: ids[11], name: 'f11.txt' });
    const page1 = await getDatasetFilesAndGroupIdsHandler({ client: client(keys.read), headers: ds(listed), path: { dataset_id: listed, page: 1 } });
    expect(page1.response.status).toBe(200);
    expect(page1.data!.total_pages).toBe(2);
    expect(page1.data!.file_and_group_ids.map((f) => f.file.id)).toEqual(ids.slice(2).reverse());
    expect(page1.data!.file_and_group_ids[0].group_id).toBe(groupId);
    expect(page1.data!.file_and_group_ids[1].group_id).toBeNull();
    const page0 = await getDatasetFilesAndGroupIdsHandler({ client: client(), headers: ds(listed), path: { dataset_id: listed, page: 0 } });
    // Same files and groups (their updated_at moves as their ingestion ends).
    const idsOf = (page: typeof page1.data) => page!.file_and_group_ids.map((f) => [f.file.id, f.group_id]);
    expect(idsOf(page0.data)).toEqual(idsOf(page1.data));
    const page2 = await getDatasetFilesAndGroupIdsHandler({ client: client(), headers: ds(listed), path: { dataset_id: listed, page: 2 } });
    expect(page2.data!.file_and_group_ids.map((f) => f.file.id)).toEqual([ids[1], ids[0]]);

    const scrolled = await getFilesCursorHandler({ client: client(), headers: ds(listed), query: { page_size: 20 } });
    expect(scrolled.data!.file_with_chunk_groups.map((f) => f.id)).toEqual([...ids].sort());
    expect(scrolled.data!.next_cursor).toBeNull();
  });

  it("refuses a path dataset that is not the header's", async () => {
    const reply = await service.request('GET', `/api/dataset/files/${randomUUID()}/1`, { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId } });
    expect(reply.status).toBe(400);
  });
});

describe('POST /api/file/csv_or_jsonl and its upload link', () => {
  async function createLink(body: Record<string, unknown> = {}) {
    const { data, response, error } = await createPresignedUrlForCsvJsonl({
      client: client(keys.admin),
      headers: ds(),
      body: {
        file_name: 'rows.jsonl',
        tag_set: ['rows'],
        mappings: [{ csv_jsonl_field: 'url', chunk_req_payload_field: 'link' }],
        upsert_by_tracking_id: false,
        ...body,
      },
    });
    expect(response.status, JSON.stringify(error)).toBe(200);
    return data!;
  }

  it('records the file awaiting its bytes; a PUT to the link streams them and starts the ingestion', async () => {
    const created = await createLink();
    expect(created.file_metadata).toMatchObject({ file_name: 'rows.jsonl', size: 0, tag_set: ['rows'] });
    const fileId = created.file_metadata.id;
    expect(await db()('files').where({ id: fileId }).first()).toMatchObject({ status: 'awaiting_upload', storage_key: null });
    // Awaiting files are not listed yet.
    const scrolled = await getFilesCursorHandler({ client: client(), headers: ds(), query: { page_size: 1000 } });
    expect(scrolled.data!.file_with_chunk_groups.map((f) => f.id)).not.toContain(fileId);

    const rows = '{"text":"first","url":"https://a.example"}\n{"text":"second","url":"https://b.example"}\n';
    const put = await send('PUT', created.presigned_put_url, { method: 'PUT', body: rows, headers: { 'content-type': 'application/x-ndjson' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.file_metadata).toMatchObject({ id: fileId, size: Buffer.byteLength(rows) });
    const row = await db()('files').where({ id: fileId }).first();
    expect(row.status).not.toBe('awaiting_upload');
    expect(row.ingest_options).toMatchObject({ mappings: [{ csv_jsonl_field: 'url', chunk_req_payload_field: 'link' }], upsert_by_tracking_id: false });
    expect((await storedBytes(fileId)).toString()).toBe(rows);

    const again = await send('PUT', created.presigned_put_url, { method: 'PUT', body: 'x' });
    expect(again.status).toBe(409);
  });

  it('refuses a tampered or expired upload link, and keeps the file awaiting after a refused upload', async () => {
    const created = await createLink();
    const fileId = created.file_metadata.id;
    const url = new URL(created.presigned_put_url);
    url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
    await leavesNothing(async () => {
      expect((await send('PUT', url.toString(), { method: 'PUT', body: 'a' })).status).toBe(403);
      const expired = await signedLink(service.services, 'upload', fileId, new Date(Date.now() - 1000));
      const reply = await send('PUT', expired, { method: 'PUT', body: 'a' });
      expect(reply.status).toBe(403);
      expect(reply.body.message).toMatch(/expired/);
      const download = await signedLink(service.services, 'download', fileId, new Date(Date.now() + 60_000));
      expect((await send('PUT', download, { method: 'PUT', body: 'a' })).status).toBe(403);
      const empty = await send('PUT', created.presigned_put_url, { method: 'PUT', body: '' });
      expect(empty.status).toBe(400);
      expect(empty.body.message).toBe('body: the file is empty');
      const tooBig = await send('PUT', created.presigned_put_url, { method: 'PUT', body: Buffer.alloc(LIMIT + 1, 'a') });
      expect(tooBig.status).toBe(413);
      // Streamed without a declared length: refused once the limit is passed.
      const streamed = await send('PUT', created.presigned_put_url, { method: 'PUT', body: chunkedBody(LIMIT + 256 * 1024), duplex: 'half' });
      expect(streamed.status).toBe(413);
      expect(streamed.body.message).toBe(`body: the file is over the upload limit of ${LIMIT} bytes (1 MB)`);
    });
    expect((await db()('files').where({ id: fileId }).first()).status).toBe('awaiting_upload');
    // The link still works after the refusals.
    expect((await send('PUT', created.presigned_put_url, { method: 'PUT', body: '{"a":1}\n' })).status).toBe(200);
  });

  it('refuses a name that is not .csv or .jsonl, and bad mappings', async () => {
    await leavesNothing(async () => {
      const wrong = await service.request('POST', '/api/file/csv_or_jsonl', {
        headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId },
        body: { file_name: 'rows.txt' },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.message).toMatch(/file_name: rows.txt must end in .csv or .jsonl/);
      const mapping = await service.request('POST', '/api/file/csv_or_jsonl', {
        headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId },
        body: { file_name: 'rows.csv', mappings: [{ csv_jsonl_field: 'a', chunk_req_payload_field: 'colour' }] },
      });
      expect(mapping.status).toBe(400);
      expect(mapping.body.message).toMatch(/chunk_req_payload_field/);
      const reader = await service.request('POST', '/api/file/csv_or_jsonl', {
        headers: { authorization: keys.read, 'SVC-Dataset': datasetId },
        body: { file_name: 'rows.csv' },
      });
      expect(reader.status).toBe(403);
    });
  });
});

describe('POST /api/file/html_page', () => {
  let scrapeId: string;
  let secret: string;
  beforeAll(async () => {
    const crawlId = await seedCrawl(db(), datasetId);
    scrapeId = (await db()('crawl_requests').where({ id: crawlId }).first('scrape_id')).scrape_id;
    secret = await crawlWebhookSecret(service.services, scrapeId);
  });

  const page = (overrides: Record<string, unknown> = {}) => ({
    data: { html: '<h1>Docs</h1><p>Install it.</p>', metadata: { title: 'Install guide', sourceURL: 'https://docs.example/install', statusCode: 200 } },
    metadata: { dataset_id: datasetId, webhook_secret: secret },
    scrapeId,
    ...overrides,
  });

  it("stores the page as an HTML file of the crawl's dataset and starts its ingestion, without an API key", async () => {
    const { response, error } = await uploadHtmlPage({ client: service.client(''), body: page() as never });
    expect(response.status, JSON.stringify(error)).toBe(204);
    const row = await db()('files').where({ dataset_id: datasetId, file_name: 'Install guide.html' }).first();
    expect(row).toMatchObject({
      link: 'https://docs.example/install',
      mime_type: 'text/html',
      metadata: { title: 'Install guide', sourceURL: 'https://docs.example/install', statusCode: 200 },
    });
    expect((await storedBytes(row.id)).toString()).toBe('<h1>Docs</h1><p>Install it.</p>');
  });

  it.each([
    ['a wrong secret', () => page({ metadata: { dataset_id: datasetId, webhook_secret: 'guess' } }), 403, /webhook_secret: does not match/],
    ['another dataset', () => page({ metadata: { dataset_id: randomUUID(), webhook_secret: secret } }), 403, /belongs to another dataset/],
    ['an unknown scrape id', () => page({ scrapeId: randomUUID() }), 404, /is not the scrape id of any crawl/],
    ['no dataset id', () => page({ metadata: { webhook_secret: secret } }), 400, /metadata.dataset_id/],
    ['metadata that is no object', () => page({ metadata: 'x' }), 400, /metadata: must be an object/],
    ['a page without content', () => page({ data: { metadata: { title: 'empty' } } }), 400, /data: the page has none of html, rawHtml and markdown/],
  ] as [string, () => unknown, number, RegExp][])('refuses %s, keeping nothing', async (_what, body, status, message) => {
    await leavesNothing(async () => {
      const reply = await service.request('POST', '/api/file/html_page', { body: body() });
      expect(reply.status).toBe(status);
      expect(reply.body.message).toMatch(message);
    });
  });
});
