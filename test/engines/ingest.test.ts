// File ingestion (the ingestFile workflow) on the engines of the mode: the in-process runner in the
// embedded project, Temporal in the full project. Files are put into storage and recorded as the
// upload records them, then the workflow runs; each format's text is extracted and split as the
// options say, chunks land in a group carrying the file id, and the outcome is one dataset event.
import { strToU8, zipSync } from 'fflate';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDataset,
  createOrganization,
  createPresignedUrlForCsvJsonl,
  getEvents,
  getFilesCursorHandler,
  searchChunks,
  uploadFileHandler,
} from '../../sdk/src/generated/sdk.gen.js';
import { checkResponse } from '../support/contract.js';
import { ADMIN_KEY } from '../support/service.js';
import { createActivities } from '../../workflows/activities/index.js';
import type { IngestFileResult } from '../../workflows/ingest.js';
import { WorkflowFailedError } from '../../server/engines/workflows/types.js';
import { workflowIds } from '../../workflows/registry.js';
import { fileChunkId, fileGroupId } from '../../server/ingest/ids.js';
import { chunkTexts, countSplits, cutLarge, groupSizes, MAX_CHUNK_CHARS, splits } from '../../server/ingest/split.js';
import { mode } from '../support/env.js';
import { lexicalIds } from '../support/lexical.js';
import { ALLOW_LOCAL_STAND_INS } from '../support/outbound.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let orgId: string;
const db = () => service.services.store.db;

async function newDataset(): Promise<string> {
  const { data, response, error } = await createDataset({
    client: service.client(),
    headers: { 'SVC-Organization': orgId },
    body: { dataset_name: `files ${Math.random()}` },
  });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!.id;
}

interface Upload {
  fileName: string;
  bytes: Buffer | string;
  mimeType?: string;
  options?: Record<string, unknown>;
}

/** Stores the bytes and records the file as the upload does, in status pending. */
async function storeFile(datasetId: string, upload: Upload): Promise<string> {
  const bytes = typeof upload.bytes === 'string' ? Buffer.from(upload.bytes) : upload.bytes;
  const [{ id }] = await db()('files')
    .insert({
      dataset_id: datasetId,
      file_name: upload.fileName,
      size: bytes.length,
      status: 'pending',
      mime_type: upload.mimeType ?? null,
      ingest_options: JSON.stringify(upload.options ?? {}),
    })
    .returning('id');
  const key = `${datasetId}/${id}`;
  await service.services.storage.put(key, Readable.from([bytes]), { maxBytes: 1024 ** 3 });
  await db()('files').where({ id }).update({ storage_key: key });
  return id;
}

/** The workflow's result; a file that failed fails its workflow, and that is returned as `failed`. */
async function ingest(datasetId: string, upload: Upload, batchSize?: number): Promise<{ fileId: string; result: IngestResult }> {
  const fileId = await storeFile(datasetId, upload);
  const handle = await service.services.workflows.run('ingestFile', { workflowId: workflowIds.ingestFile(fileId), input: { datasetId, fileId, batchSize } });
  expect(handle.workflowId).toBe(`ingest-file-${fileId}`);
  try {
    return { fileId, result: await handle.result() };
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    return { fileId, result: { status: 'failed', chunksCreated: 0, reason: error.reason } };
  }
}

type IngestResult = IngestFileResult | { status: 'failed'; chunksCreated: 0; reason: string; webhook?: undefined };

/** The file's chunks in file order (by the position their id derives from). */
async function chunksOf(fileId: string, count: number) {
  const ids = Array.from({ length: count }, (_, i) => fileChunkId(fileId, i));
  const rows = await db()('chunks').whereIn('id', ids);
  return ids.map((id) => rows.find((r) => r.id === id));
}

async function eventsOf(datasetId: string) {
  return db()('events').where({ dataset_id: datasetId }).orderBy('created_at');
}

async function countWhere(table: string, where: Record<string, unknown>): Promise<number> {
  const [{ n }] = await db()(table).where(where).count({ n: '*' });
  return Number(n);
}

const sentences = (n: number, word = 'alpha') => Array.from({ length: n }, (_, i) => `${word} sentence number ${i}.`).join(' ');

async function pdfOf(pages: string[][]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage();
    for (const [i, line] of lines.entries()) page.drawText(line, { x: 40, y: 760 - i * 16, size: 11, font });
  }
  return Buffer.from(await doc.save());
}

function docxOf(paragraphs: string[]): Buffer {
  const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${body}`;
  const document = xml(
    `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${paragraphs
      .map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`)
      .join('')}</w:body></w:document>`,
  );
  const types = xml(
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  );
  const rels = xml(
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
  );
  return Buffer.from(zipSync({ '[Content_Types].xml': strToU8(types), '_rels/.rels': strToU8(rels), 'word/document.xml': strToU8(document) }));
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('splitting text as the reference documents it', () => {
  it('groups splits by the target and spreads the remainder over the first chunks when rebalancing', () => {
    expect([...groupSizes(66, 20, true)]).toEqual([22, 22, 22]);
    expect([...groupSizes(45, 20, true)]).toEqual([23, 22]);
    expect([...groupSizes(45, 20, false)]).toEqual([20, 20, 5]);
    expect([...groupSizes(60, 20, true)]).toEqual([20, 20, 20]);
    expect([...groupSizes(7, 20, true)]).toEqual([7]);
    expect(() => groupSizes(7, 0, true).next()).toThrow(/positive integer/);
  });

  it('cuts after runs of the default delimiters, or after the given ones, whatever the segments', async () => {
    const text = 'One. Two!! Three?\nFour\n\nfive... six';
    const expected = ['One.', ' Two!!', ' Three?\n', 'Four\n\n', 'five...', ' six'];
    expect(await collect(splits([text]))).toEqual(expected);
    // The same splits however the text is cut into segments (a run may straddle two).
    for (const size of [1, 2, 3, 5, 7]) {
      const segments = text.match(new RegExp(`[^]{1,${size}}`, 'g'))!;
      expect(await collect(splits(segments))).toEqual(expected);
    }
    // Custom delimiters, a multi-character one straddling segments; empty ones are ignored.
    const custom = ['a || b', ' || c;', 'd'];
    expect(await collect(splits(custom, ['||', ';', '']))).toEqual(['a ||', ' b ||', ' c;', 'd']);
    expect(await countSplits(['x. y. z'])).toBe(3);
  });

  it('makes one chunk of a short text, groups longer ones, and cuts chunks of 10,000 characters or more', async () => {
    const text = sentences(66);
    const chunks = await collect(chunkTexts(() => [text]));
    expect(chunks).toHaveLength(3);
    expect(chunks.join('')).toBe(text);
    expect(chunks[0].match(/\./g)).toHaveLength(22);
    expect(await collect(chunkTexts(() => [sentences(5)]))).toEqual([sentences(5)]);
    const unbalanced = await collect(chunkTexts(() => [text], { rebalance: false, targetSplitsPerChunk: 30 }));
    expect(unbalanced.map((c) => c.match(/\./g)!.length)).toEqual([30, 30, 6]);

    const long = 'x'.repeat(25_000);
    const parts = cutLarge(long);
    expect(parts).toHaveLength(3);
    expect(parts.every((p) => p.length < MAX_CHUNK_CHARS)).toBe(true);
    expect(parts.join('')).toBe(long);
    // A surrogate pair is never cut in two.
    const emoji = '😀'.repeat(6000);
    expect(cutLarge(emoji).every((p) => !/[\uD800-\uDBFF]$/.test(p))).toBe(true);
  });
});

describe(`file ingestion (${mode})`, () => {
  let datasetId: string;

  beforeAll(async () => {
    service = await startTestService(ALLOW_LOCAL_STAND_INS);
    const { data } = await createOrganization({ client: service.client(), body: { name: 'Files Inc' } });
    orgId = data!.id;
    datasetId = await newDataset();
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('ingests a text file into a group for the file, with its tags, metadata, link and time stamp', async () => {
    const text = sentences(45, 'pelican');
    const { fileId, result } = await ingest(datasetId, {
      fileName: 'notes.txt',
      bytes: text,
      options: {
        tag_set: ['a', 'b'],
        metadata: { team: 'birds' },
        link: 'https://example.com/notes',
        time_stamp: '2024-05-06T07:08:09',
        group_tracking_id: 'notes',
        description: 'bird notes',
      },
    });
    expect(result).toEqual({ status: 'completed', chunksCreated: 2 });
    const chunks = await chunksOf(fileId, 2);
    expect(chunks.map((c) => c?.chunk_html).join('')).toBe(text);
    expect(chunks[0]).toMatchObject({
      tracking_id: 'notes|0',
      tag_set: ['a', 'b'],
      metadata: { team: 'birds' },
      link: 'https://example.com/notes',
      time_stamp: expect.stringMatching(/^2024-05-06[ T]07:08:09/),
    });
    expect(chunks[1]!.tracking_id).toBe('notes|1');

    const group = await db()('chunk_groups')
      .where({ id: fileGroupId(fileId) })
      .first();
    expect(group).toMatchObject({
      dataset_id: datasetId,
      file_id: fileId,
      name: 'notes.txt',
      tracking_id: 'notes',
      description: 'bird notes',
      tag_set: ['a', 'b'],
    });
    expect(await countWhere('chunk_group_bookmarks', { group_id: group.id })).toBe(2);
    // As API-created chunks: a vector each, BM25 terms, and found by the lexical index.
    expect(
      await db()('chunk_vectors')
        .whereIn(
          'chunk_id',
          chunks.map((c) => c!.id),
        )
        .count({ n: '*' })
        .then(([r]) => Number(r.n)),
    ).toBe(2);
    expect(chunks.every((c) => c!.bm25_length > 0)).toBe(true);
    const found = await lexicalIds(service.services.config.lexical, db(), datasetId, 'pelican');
    expect(found).toEqual(chunks.map((c) => c!.id).sort());

    expect(await db()('files').where({ id: fileId }).first()).toMatchObject({ status: 'completed' });
    expect(await countWhere('ingest_pieces', { file_id: fileId })).toBe(0);
    const events = (await eventsOf(datasetId)).filter((e) => e.event_data.file_id === fileId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event_type: 'file_uploaded',
      organization_id: orgId,
      event_data: { file_id: fileId, file_name: 'notes.txt', group_id: group.id, chunks_created: 2 },
    });
    // And through the API, checked against the contract.
    const { data } = await getEvents({ client: service.client(), headers: { 'SVC-Dataset': datasetId }, body: { event_types: ['file_uploaded'] } });
    expect(data!.events.some((e) => JSON.parse(e.event_data).file_id === fileId)).toBe(true);
  });

  it('follows split_delimiters, target_splits_per_chunk and rebalance_chunks', async () => {
    const text = Array.from({ length: 10 }, (_, i) => `part ${i}`).join(' | ');
    const { fileId, result } = await ingest(datasetId, {
      fileName: 'parts.txt',
      bytes: text,
      options: { split_delimiters: ['|'], target_splits_per_chunk: 3, rebalance_chunks: false },
    });
    expect(result.chunksCreated).toBe(4);
    const chunks = await chunksOf(fileId, 4);
    expect(chunks.map((c) => c!.chunk_html)).toEqual(['part 0 | part 1 | part 2 |', ' part 3 | part 4 | part 5 |', ' part 6 | part 7 | part 8 |', ' part 9']);
    expect(chunks[0]!.tracking_id).toBeNull();
  });

  it('keeps the whole text as one averaged chunk with split_avg', async () => {
    const { fileId, result } = await ingest(datasetId, {
      fileName: 'avg.md',
      bytes: `# Title\n\n${sentences(50)}`,
      options: { split_avg: true, group_tracking_id: 'avg' },
    });
    expect(result.chunksCreated).toBe(1);
    const [chunk] = await chunksOf(fileId, 1);
    expect(chunk).toMatchObject({ split_avg: true, tracking_id: 'avg' });
    expect(chunk!.chunk_html).toContain('# Title');
  });

  it('extracts Markdown, HTML, PDF and DOCX', async () => {
    const md = await ingest(datasetId, { fileName: 'readme.md', bytes: '# Heading\n\nSome *markdown* text. Another sentence!' });
    expect(md.result.chunksCreated).toBe(1);
    expect((await chunksOf(md.fileId, 1))[0]!.chunk_html).toBe('# Heading\n\nSome *markdown* text. Another sentence!');

    const html = await ingest(datasetId, {
      fileName: 'page.html',
      bytes:
        '<html><head><title>Owls</title><style>p{color:red}</style></head><body><h1>Night birds</h1><p>Owls hunt &amp; sleep.</p><script>alert(1)</script><ul><li>Barn owl</li><li>Snowy owl</li></ul></body></html>',
    });
    const htmlText = (await chunksOf(html.fileId, html.result.chunksCreated)).map((c) => c!.chunk_html).join('');
    expect(htmlText).toContain('Owls hunt & sleep.');
    expect(htmlText).toMatch(/Barn owl\s+Snowy owl/);
    expect(htmlText).toContain('Night birds');
    expect(htmlText).not.toMatch(/alert|color:red|<p>/);

    const pdf = await ingest(datasetId, {
      fileName: 'report.pdf',
      bytes: await pdfOf([
        ['The first page opens.', 'It has a second line!'],
        ['Page two talks about herons.', 'Herons wade.'],
      ]),
      options: { target_splits_per_chunk: 2 },
    });
    expect(pdf.result.status).toBe('completed');
    const pdfChunks = (await chunksOf(pdf.fileId, pdf.result.chunksCreated)).map((c) => c!.chunk_html);
    expect(pdfChunks.join('')).toMatch(/The first page opens\.\s*It has a second line!\s*Page two talks about herons\.\s*Herons wade\./);
    expect(pdfChunks.length).toBeGreaterThanOrEqual(2);

    const docx = await ingest(datasetId, { fileName: 'memo.docx', bytes: docxOf(['Memo about storks.', 'Storks fly far!']) });
    expect(docx.result.status).toBe('completed');
    expect((await chunksOf(docx.fileId, docx.result.chunksCreated)).map((c) => c!.chunk_html).join('')).toMatch(/Memo about storks\.\s+Storks fly far!/);
  });

  it('makes one chunk per CSV row, with the field mapping', async () => {
    const csv = [
      'id,name,price,tags,url,lat,lon,when,note',
      'p1,Red kite,12.5,"[raptor, red]",https://example.com/kite,51.5,-0.1,2024-01-02T03:04:05,null',
      'p2,Blue tit,3,small,https://example.com/tit,,,1700000000,cute',
    ].join('\n');
    const { fileId, result } = await ingest(datasetId, {
      fileName: 'birds.csv',
      bytes: csv,
      options: {
        tag_set: ['catalogue'],
        fulltext_boost_factor: 2,
        mappings: [
          { csv_jsonl_field: 'id', chunk_req_payload_field: 'tracking_id' },
          { csv_jsonl_field: 'price', chunk_req_payload_field: 'num_value' },
          { csv_jsonl_field: 'tags', chunk_req_payload_field: 'tag_set' },
          { csv_jsonl_field: 'url', chunk_req_payload_field: 'link' },
          { csv_jsonl_field: 'lat', chunk_req_payload_field: 'lat' },
          { csv_jsonl_field: 'lon', chunk_req_payload_field: 'lon' },
          { csv_jsonl_field: 'when', chunk_req_payload_field: 'time_stamp' },
          { csv_jsonl_field: 'name', chunk_req_payload_field: 'boost_phrase' },
        ],
      },
    });
    expect(result).toEqual({ status: 'completed', chunksCreated: 2 });
    const [kite, tit] = await chunksOf(fileId, 2);
    expect(JSON.parse(kite!.chunk_html)).toEqual({
      id: 'p1',
      name: 'Red kite',
      price: 12.5,
      tags: '[raptor, red]',
      url: 'https://example.com/kite',
      lat: 51.5,
      lon: -0.1,
      when: '2024-01-02T03:04:05',
    });
    expect(kite).toMatchObject({
      tracking_id: 'p1',
      num_value: 12.5,
      tag_set: ['catalogue', 'raptor', 'red'],
      link: 'https://example.com/kite',
      location_lat: 51.5,
      location_lon: -0.1,
      time_stamp: expect.stringMatching(/^2024-01-02[ T]03:04:05/),
      metadata: { id: 'p1', note: null, price: 12.5 },
      fulltext_boost: { phrase: 'Red kite', boost_factor: 2 },
    });
    expect(tit).toMatchObject({
      tracking_id: 'p2',
      num_value: 3,
      tag_set: ['catalogue', 'small'],
      location_lat: null,
      time_stamp: expect.stringMatching(/^2023-11-14[ T]22:13:20/),
    });
  });

  it('makes one chunk per JSONL line and per item of a JSON array', async () => {
    const jsonl = await ingest(datasetId, {
      fileName: 'rows.jsonl',
      bytes: '{"sku":"a1","title":"Heron print"}\n\n{"sku":"a2","title":"Egret print","tags":["art"]}\n',
      options: {
        mappings: [
          { csv_jsonl_field: 'sku', chunk_req_payload_field: 'tracking_id' },
          { csv_jsonl_field: 'tags', chunk_req_payload_field: 'tag_set' },
        ],
      },
    });
    expect(jsonl.result.chunksCreated).toBe(2);
    const [a1, a2] = await chunksOf(jsonl.fileId, 2);
    expect(a1).toMatchObject({ tracking_id: 'a1', metadata: { sku: 'a1', title: 'Heron print' } });
    expect(a2).toMatchObject({ tracking_id: 'a2', tag_set: ['art'] });

    const json = await ingest(datasetId, { fileName: 'items.json', bytes: JSON.stringify([{ n: 1 }, { n: 2 }, { n: 3 }]) });
    expect(json.result.chunksCreated).toBe(3);
    expect((await chunksOf(json.fileId, 3)).map((c) => c!.chunk_html)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
  });

  it.each([
    [
      'an image',
      'photo.png',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      /photo\.png: this type of file cannot be read as text/,
    ],
    ['a broken PDF', 'broken.pdf', Buffer.from('%PDF-1.4\nthis is not really a pdf'), /the PDF could not be read/],
    ['a text file named .pdf', 'fake.pdf', Buffer.from('hello there'), /does not start like a PDF file/],
    ['a broken DOCX', 'broken.docx', Buffer.from('PK\u0003\u0004garbage'), /the DOCX file could not be read/],
    ['a CSV with an unclosed quote', 'bad.csv', Buffer.from('a,b\n"1,2\n'), /the CSV file could not be parsed/],
    ['a JSONL file with a bad line', 'bad.jsonl', Buffer.from('{"a":1}\n{nope}\n'), /line 2 of the JSONL file is not JSON/],
    ['a text without text', 'blank.txt', Buffer.from('   \n\n  '), /no text could be extracted/],
  ])('fails %s with a file_upload_failed event naming the reason, leaving nothing behind', async (_, fileName, bytes, reason) => {
    const dataset = await newDataset();
    const { fileId, result } = await ingest(dataset, { fileName, bytes });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(reason);
    expect(await db()('files').where({ id: fileId }).first()).toMatchObject({ status: 'failed' });
    const [event] = await eventsOf(dataset);
    expect(event).toMatchObject({
      event_type: 'file_upload_failed',
      event_data: { file_id: fileId, file_name: fileName, error: expect.stringMatching(reason) },
    });
    expect(await countWhere('chunks', { dataset_id: dataset })).toBe(0);
    expect(await countWhere('chunk_groups', { dataset_id: dataset })).toBe(0);
    expect(await countWhere('ingest_pieces', { file_id: fileId })).toBe(0);
  });

  it('fails a file whose chunks would not fit the plan, and a file whose options are wrong', async () => {
    const dataset = await newDataset();
    const [plan] = await db()('plans')
      .insert({ name: `tiny ${Math.random()}`, chunk_count: 3, dataset_count: 10, file_storage: 1e9, message_count: 10, user_count: 10 })
      .returning('id');
    const [org] = await db()('organizations').insert({ name: 'small org' }).returning('id');
    await db()('subscriptions').insert({ organization_id: org.id, plan_id: plan.id });
    await db()('datasets').where({ id: dataset }).update({ organization_id: org.id });
    const big = await ingest(dataset, { fileName: 'big.txt', bytes: sentences(100) });
    expect(big.result).toMatchObject({ status: 'failed', reason: expect.stringMatching(/makes 5 chunks; the tiny .* plan allows 3 chunks/) });
    expect(await countWhere('chunks', { dataset_id: dataset })).toBe(0);

    const wrong = await ingest(dataset, { fileName: 'x.txt', bytes: 'hello.', options: { time_stamp: 'yesterday' } });
    expect(wrong.result).toMatchObject({ status: 'failed', reason: expect.stringMatching(/time_stamp: yesterday is not an ISO 8601 date/) });
  });

  it('creates no chunk and no group with create_chunks false', async () => {
    const dataset = await newDataset();
    const { fileId, result } = await ingest(dataset, { fileName: 'keep.txt', bytes: 'Just stored.', options: { create_chunks: false } });
    expect(result).toEqual({ status: 'completed', chunksCreated: 0 });
    expect(await countWhere('chunks', { dataset_id: dataset })).toBe(0);
    expect(await countWhere('chunk_groups', { dataset_id: dataset })).toBe(0);
    expect((await eventsOf(dataset)).map((e) => e.event_type)).toEqual(['file_uploaded']);
    expect(await db()('files').where({ id: fileId }).first()).toMatchObject({ status: 'completed' });
  });

  it('creates every chunk once when a range is run again (a retry after a lost answer)', async () => {
    const dataset = await newDataset();
    const { fileId, result } = await ingest(dataset, { fileName: 'many.txt', bytes: sentences(20 * 30), options: { rebalance_chunks: false } }, 7);
    expect(result.chunksCreated).toBe(30);
    // Stage again and replay the ranges, as a retry would: nothing new.
    const activities = createActivities({ store: service.services.store, lexical: service.services.lexical, storage: service.services.storage });
    expect(await activities.stageFilePieces({ datasetId: dataset, fileId })).toEqual({ ok: true, pieces: 30 });
    const again = await activities.createFileChunks({ datasetId: dataset, fileId, groupId: fileGroupId(fileId), from: 0, count: 30 });
    expect(again).toEqual({ created: 0, gone: false });
    expect(await countWhere('chunks', { dataset_id: dataset })).toBe(30);
    // A finished file records its outcome once.
    expect(await activities.finishFileIngestion({ datasetId: dataset, fileId, fileName: 'many.txt', outcome: { status: 'completed', groupId: null } })).toEqual(
      { chunksCreated: 30 },
    );
    expect(await eventsOf(dataset)).toHaveLength(1);
  });

  describe('through the API: upload, then the completion event', () => {
    /** Waits for the file's file_uploaded or file_upload_failed event, read through POST /api/dataset/events. */
    async function completion(dataset: string, fileId: string): Promise<{ event_type: string; data: Record<string, any> }> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { data } = await getEvents({
          client: service.client(),
          headers: { 'SVC-Dataset': dataset },
          body: { event_types: ['file_uploaded', 'file_upload_failed'], page_size: 100 },
        });
        const event = data!.events.find((e) => JSON.parse(e.event_data).file_id === fileId);
        if (event) return { event_type: event.event_type, data: JSON.parse(event.event_data) };
        if (Date.now() > deadline) throw new Error(`no completion event for file ${fileId}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    async function send(method: string, url: string, init: RequestInit): Promise<{ status: number; body: any }> {
      const full = url.startsWith('http') ? url : service.url + url;
      const response = await fetch(full, { method, ...init });
      const text = await response.text();
      const json = response.headers.get('content-type')?.includes('json');
      const body = json && text ? JSON.parse(text) : text;
      checkResponse(method, full, response.status, json ? body : text || undefined, response.headers.get('content-type'));
      return { status: response.status, body };
    }

    it("a base64 PDF upload ends in file_uploaded, its chunks in the file's group and found by search", async () => {
      const dataset = await newDataset();
      const pdf = await pdfOf([['Cormorants dive for fish.', 'They dry their wings in the sun.'], ['A second page on cormorants.']]);
      const { data, response, error } = await uploadFileHandler({
        client: service.client(),
        headers: { 'SVC-Dataset': dataset },
        body: { base64_file: pdf.toString('base64url'), file_name: 'cormorants.pdf', tag_set: ['birds'], group_tracking_id: 'cormorant-file' },
      });
      expect(response.status, JSON.stringify(error)).toBe(200);
      const fileId = data!.file_metadata.id;
      const done = await completion(dataset, fileId);
      expect(done).toMatchObject({ event_type: 'file_uploaded', data: { file_id: fileId, file_name: 'cormorants.pdf', chunks_created: 1 } });

      const scrolled = await getFilesCursorHandler({ client: service.client(), headers: { 'SVC-Dataset': dataset }, query: {} });
      const file = scrolled.data!.file_with_chunk_groups.find((f) => f.id === fileId)!;
      expect(file.chunk_groups).toHaveLength(1);
      expect(file.chunk_groups![0]).toMatchObject({ name: 'cormorants.pdf', tracking_id: 'cormorant-file' });

      const found = await searchChunks({
        client: service.client(),
        headers: { 'SVC-Dataset': dataset },
        body: { query: 'cormorants dive', search_type: 'fulltext' },
      });
      expect(found.response.status, JSON.stringify(found.error)).toBe(200);
      const hits = (found.data as { score_chunks: { metadata: { id: string; tracking_id: string; tag_set: string }[] }[] }).score_chunks;
      expect(hits.map((h) => h.metadata[0])).toMatchObject([{ id: fileChunkId(fileId, 0), tracking_id: 'cormorant-file|0', tag_set: 'birds' }]);
      const [chunk] = await chunksOf(fileId, 1);
      expect(chunk!.chunk_html).toMatch(/Cormorants dive for fish\.\s*They dry their wings in the sun\.\s*A second page on cormorants\./);
    });

    it('a multipart upload is ingested like a base64 one; an unreadable file ends in file_upload_failed', async () => {
      const dataset = await newDataset();
      const form = new FormData();
      form.append('target_splits_per_chunk', '5');
      form.append('file', new Blob([sentences(12, 'gannet')]), 'gannets.txt');
      const uploaded = await send('POST', '/api/file', { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset }, body: form });
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
      const done = await completion(dataset, uploaded.body.file_metadata.id);
      expect(done).toMatchObject({ event_type: 'file_uploaded', data: { chunks_created: 2 } });

      const bad = new FormData();
      bad.append('file', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0])]), 'image.png');
      const refused = await send('POST', '/api/file', { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset }, body: bad });
      expect(refused.status).toBe(200);
      const failed = await completion(dataset, refused.body.file_metadata.id);
      expect(failed).toMatchObject({ event_type: 'file_upload_failed', data: { error: expect.stringMatching(/image\.png .*cannot be read as text/) } });
    });

    it('a CSV sent to its upload link becomes one chunk per row, with the mapping', async () => {
      const dataset = await newDataset();
      const { data, response, error } = await createPresignedUrlForCsvJsonl({
        client: service.client(),
        headers: { 'SVC-Dataset': dataset },
        body: {
          file_name: 'shop.csv',
          mappings: [
            { csv_jsonl_field: 'sku', chunk_req_payload_field: 'tracking_id' },
            { csv_jsonl_field: 'price', chunk_req_payload_field: 'num_value' },
          ],
        },
      });
      expect(response.status, JSON.stringify(error)).toBe(200);
      const put = await send('PUT', data!.presigned_put_url, {
        body: 'sku,title,price\nk1,Kite poster,20\nk2,Kite mug,8.5\n',
        headers: { 'content-type': 'text/csv' },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const done = await completion(dataset, data!.file_metadata.id);
      expect(done).toMatchObject({ event_type: 'file_uploaded', data: { chunks_created: 2 } });
      const rows = await db()('chunks').where({ dataset_id: dataset }).orderBy('tracking_id');
      expect(rows.map((r) => [r.tracking_id, r.num_value, JSON.parse(r.chunk_html).title])).toEqual([
        ['k1', 20, 'Kite poster'],
        ['k2', 8.5, 'Kite mug'],
      ]);
    });
  });

  describe('a file deleted while it is being ingested', () => {
    /** Starts the ingestion without waiting for it. */
    async function startIngest(dataset: string, upload: Upload, batchSize: number) {
      const fileId = await storeFile(dataset, upload);
      const handle = await service.services.workflows.run('ingestFile', {
        workflowId: workflowIds.ingestFile(fileId),
        input: { datasetId: dataset, fileId, batchSize },
      });
      return { fileId, handle };
    }

    async function waitForChunks(dataset: string, atLeast: number): Promise<number> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const n = await countWhere('chunks', { dataset_id: dataset });
        if (n >= atLeast) return n;
        if (Date.now() > deadline) throw new Error(`still ${n} chunks, waiting for ${atLeast}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }

    /**
     * Holds the dataset's index removals while `during` runs, until the ingestion starts writing its
     * next batch (or 5 s pass): so that batch runs in the middle of the deletion's steps (find the
     * group's chunks, delete them and their index entries, delete the group), the worst moment.
     */
    async function withIndexRemovalsHeld<R>(dataset: string, during: () => Promise<R>): Promise<R> {
      const { lexical, store } = service.services;
      const original = lexical.remove;
      let release!: () => void;
      const nextWrite = new Promise<void>((resolve) => (release = resolve));
      // The batch's first statement: its lock on the file row, or (were there none) its insert.
      const listener = (query: { sql: string }) => {
        if (/for share|insert into "chunks"/i.test(query.sql)) release();
      };
      store.db.on('query', listener);
      lexical.remove = async (datasetId, ids) => {
        if (datasetId === dataset) await Promise.race([nextWrite, new Promise((r) => setTimeout(r, 5000))]);
        return original.call(lexical, datasetId, ids);
      };
      try {
        return await during();
      } finally {
        lexical.remove = original;
        store.db.removeListener('query', listener);
      }
    }

    // 600 chunks, 360 per activity written 120 at a time (the chunk path's batch): the deletion lands
    // between, or during, the batches' writes, and some batches follow others in the same activity.
    it.each([
      ['after its first batch', 1],
      ['a quarter in', 150],
    ])('gets no chunk once DELETE /api/file with delete_chunks has answered (%s)', async (_, atLeast) => {
      const dataset = await newDataset();
      const { fileId, handle } = await startIngest(
        dataset,
        { fileName: 'long.txt', bytes: sentences(20 * 600, 'osprey'), options: { rebalance_chunks: false } },
        360,
      );
      const seen = await waitForChunks(dataset, atLeast);
      const reply = await withIndexRemovalsHeld(dataset, () =>
        service.request('DELETE', `/api/file/${fileId}?delete_chunks=true`, { headers: { authorization: ADMIN_KEY, 'SVC-Dataset': dataset } }),
      );
      expect(reply.status, JSON.stringify(reply.body)).toBe(204);
      expect(await countWhere('chunks', { dataset_id: dataset })).toBe(0);

      const result = await handle.result();
      // Deleted mid-way: the ingestion noticed and stopped, having written nothing since.
      expect(result).toMatchObject({ status: 'gone', chunksCreated: 0 });
      expect(seen).toBeLessThan(600);
      expect(await countWhere('chunks', { dataset_id: dataset })).toBe(0);
      expect(await countWhere('chunk_groups', { dataset_id: dataset })).toBe(0);
      expect(await countWhere('files', { id: fileId })).toBe(0);
      expect(await countWhere('ingest_pieces', { file_id: fileId })).toBe(0);
      expect(await lexicalIds(service.services.config.lexical, db(), dataset, 'osprey')).toEqual([]);
      expect(await countWhere('events', { dataset_id: dataset })).toBe(0);
    });
  });

  describe('a failing embedding endpoint', () => {
    let server: Server;
    let baseUrl: string;
    /** Each request: when it came, and how it was answered. */
    const calls: { at: number; answer: string }[] = [];
    /** How the next requests are answered, in order; then 200 with vectors. */
    let script: ('503' | '429' | 'reset' | '400')[] = [];
    let always: '400' | null = null;

    beforeAll(async () => {
      server = createServer((req, res) => {
        let raw = '';
        req.on('data', (d) => (raw += d));
        req.on('end', () => {
          const answer = always ?? script.shift() ?? '200';
          calls.push({ at: Date.now(), answer });
          if (answer === 'reset') return req.socket.destroy();
          if (answer !== '200') return res.writeHead(Number(answer), { 'content-type': 'application/json' }).end('{"error":"stand-in says no"}');
          const { input } = JSON.parse(raw) as { input: string[] };
          const data = input.map((text, index) => ({ index, embedding: [1, text.length % 7, text.length % 5, 0.5] }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });

    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    async function remoteDataset(): Promise<string> {
      const { data, response, error } = await createDataset({
        client: service.client(),
        headers: { 'SVC-Organization': orgId },
        body: {
          dataset_name: `remote ${Math.random()}`,
          server_configuration: { EMBEDDING_BASE_URL: baseUrl, EMBEDDING_MODEL_NAME: 'stand-in', EMBEDDING_SIZE: 4 },
        },
      });
      expect(response.status, JSON.stringify(error)).toBe(200);
      return data!.id;
    }

    it('is retried with back-off while it fails (no answer, 429, 5xx), and the file completes', async () => {
      const dataset = await remoteDataset();
      calls.length = 0;
      // More failures than the embedder's own retries (4 requests): the activity's retry policy takes over.
      script = ['503', 'reset', '429', '503', '503', 'reset'];
      const { fileId, result } = await ingest(dataset, { fileName: 'flaky.txt', bytes: sentences(60, 'puffin'), options: { rebalance_chunks: false } });
      expect(result).toEqual({ status: 'completed', chunksCreated: 3 });
      expect(calls.map((c) => c.answer)).toEqual(['503', 'reset', '429', '503', '503', 'reset', '200']);
      // The activity's first attempt ended after the 4th failure; its retry came after the policy's 1 s.
      expect(calls[4].at - calls[3].at).toBeGreaterThanOrEqual(900);
      const chunks = await chunksOf(fileId, 3);
      expect(chunks.every(Boolean)).toBe(true);
      expect(await countWhere('chunk_vectors', { dataset_id: dataset })).toBe(3);
      expect((await eventsOf(dataset)).map((e) => e.event_type)).toEqual(['file_uploaded']);
    });

    it('fails the file at once when the endpoint refuses the input (4xx other than 429)', async () => {
      const dataset = await remoteDataset();
      calls.length = 0;
      always = '400';
      try {
        const { fileId, result } = await ingest(dataset, { fileName: 'refused.txt', bytes: sentences(5, 'tern') });
        expect(result).toMatchObject({ status: 'failed', reason: expect.stringMatching(/could not be embedded: embedding endpoint .* answered 400/) });
        expect(calls).toHaveLength(1);
        expect(await db()('files').where({ id: fileId }).first()).toMatchObject({ status: 'failed' });
        expect(await countWhere('chunks', { dataset_id: dataset })).toBe(0);
        expect((await eventsOf(dataset)).map((e) => e.event_type)).toEqual(['file_upload_failed']);
      } finally {
        always = null;
      }
    });
  });

  describe('webhook_url', () => {
    let server: Server;
    let url: string;
    const received: { path: string; body: any }[] = [];
    let failures = 0;

    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          received.push({ path: req.url!, body: JSON.parse(body) });
          if (req.url === '/down') {
            failures++;
            res.writeHead(503).end();
          } else res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('is called once the file is done, with its outcome', async () => {
      const dataset = await newDataset();
      const { fileId, result } = await ingest(dataset, { fileName: 'hook.txt', bytes: 'A webhook test.', options: { webhook_url: `${url}/ok` } });
      expect(result.webhook).toEqual({ delivered: true, status: 204 });
      expect(received.filter((r) => r.path === '/ok').map((r) => r.body)).toEqual([
        { event_type: 'file_uploaded', dataset_id: dataset, file_id: fileId, file_name: 'hook.txt', status: 'completed', chunks_created: 1, error: null },
      ]);
      const failed = await ingest(dataset, { fileName: 'hook.png', bytes: Buffer.from([0, 1, 2]), options: { webhook_url: `${url}/ok` } });
      expect(received.at(-1)!.body).toMatchObject({
        event_type: 'file_upload_failed',
        file_id: failed.fileId,
        status: 'failed',
        error: expect.stringMatching(/cannot be read as text/),
      });
    });

    it('is retried when it fails, and its failure is recorded without failing the file', async () => {
      const dataset = await newDataset();
      const { fileId, result } = await ingest(dataset, { fileName: 'hook2.txt', bytes: 'Another webhook test.', options: { webhook_url: `${url}/down` } });
      expect(result.status).toBe('completed');
      expect(result.webhook).toEqual({ delivered: false, error: expect.stringMatching(/answered 503/) });
      expect(failures).toBe(4);
      expect(await db()('files').where({ id: fileId }).first()).toMatchObject({ status: 'completed' });
    });
  });
});
