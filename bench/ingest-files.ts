// The file ingestion suite: how fast an uploaded file becomes searchable chunks. Two deterministic
// corpora are built (a plain-text file of help-centre prose, and a PDF of the same kind of prose
// set in pages), each is uploaded through the streamed multipart route of POST /api/file, and the
// clock runs until the dataset's `file_uploaded` event arrives (polled through POST
// /api/dataset/events). Reported: MB/s of file and chunks/s, over upload + ingestion, the split
// between the two, and the resident memory of the process (service and this client) at its peak.
// Every run is checked: the event's chunk count matches the chunks stored in the file's group.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { createClient, type Client } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization, getEvents } from '../sdk/src/generated/sdk.gen.js';
import { loadConfig } from '../server/config.js';
import { innerText } from '../server/domain/chunks/content.js';
import { startService, type RunningService } from '../server/main.js';
import { generateCorpus } from './corpus.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { postMultipart } from './multipart.js';
import { fmt, RssSampler, table } from './report.js';

const MIB = 1024 ** 2;

export interface FilesIngestOptions {
  /** Size of the text corpus, in MiB. */
  textMib: number;
  /** Pages of the PDF corpus. */
  pdfPages: number;
  seed: number;
}

interface IngestRun {
  corpus: 'text' | 'pdf';
  file_bytes: number;
  /** Characters of text the chunks hold (what extraction found). */
  text_chars: number;
  chunks: number;
  upload_s: number;
  ingest_s: number;
  total_s: number;
  /** File megabytes (10^6 bytes) per second, upload to completion event. */
  mb_per_s: number;
  chunks_per_s: number;
  rss_peak_mib: number;
}

export interface FilesIngestResult {
  options: FilesIngestOptions;
  engines: Record<string, string>;
  runs: IngestRun[];
}

export async function runFilesIngest(modeEnv: ModeEnvironment, options: FilesIngestOptions, log: (line: string) => void): Promise<FilesIngestResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-files-ingest-'));
  const service = await startService(loadConfig(await modeEnv.freshEnv()));
  try {
    const textFile = path.join(dir, 'corpus.txt');
    const pdfFile = path.join(dir, 'corpus.pdf');
    await writeFile(textFile, textCorpus(options.textMib * MIB, options.seed));
    await writeFile(pdfFile, await pdfCorpus(options.pdfPages, options.seed + 1));
    log(`corpora: text ${fmt((await stat(textFile)).size / MIB, 1)} MiB, PDF ${options.pdfPages} pages, ${fmt((await stat(pdfFile)).size / MIB, 1)} MiB`);

    const client = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = await createOrganization({ client, body: { name: 'bench-files-ingest' } });
    const newDataset = async (name: string) =>
      (await createDataset({ client, headers: { 'SVC-Organization': org.data!.id }, body: { dataset_name: name } })).data!.id;
    const engines = { store: service.services.store.kind, lexical: service.services.lexical.kind, workflows: service.services.workflows.kind };
    log(`service on ${service.url} (${engines.store}, ${engines.lexical}, ${engines.workflows})`);

    // Warm-up: the first ingestion loads code (PDF.js, the workflow sandbox) that is not the files' cost.
    const warmFile = path.join(dir, 'warm.pdf');
    await writeFile(warmFile, await pdfCorpus(2, options.seed + 2));
    await measure(service, client, await newDataset('warm-up'), warmFile, 'pdf', log);

    const runs = [
      await measure(service, client, await newDataset('text'), textFile, 'text', log),
      await measure(service, client, await newDataset('pdf'), pdfFile, 'pdf', log),
    ];
    return { options, engines, runs };
  } finally {
    await service.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function measure(
  service: RunningService,
  client: Client,
  datasetId: string,
  file: string,
  corpus: IngestRun['corpus'],
  log: (line: string) => void,
): Promise<IngestRun> {
  const bytes = (await stat(file)).size;
  const rss = new RssSampler().start();
  const t0 = performance.now();
  const fileId = await postMultipart(service.url, datasetId, {
    fileName: corpus === 'pdf' ? 'corpus.pdf' : 'corpus.txt',
    contentType: 'application/octet-stream',
    size: (await stat(file)).size,
    body: createReadStream(file),
  });
  const uploaded = performance.now();
  const event = await completion(client, datasetId, fileId, log);
  const done = performance.now();
  const peak = rss.peak();
  rss.stop();
  if (event.event_type !== 'file_uploaded') throw new Error(`${corpus} corpus: ${event.event_type}: ${event.data.error}`);
  const db = service.services.store.db;
  const [{ n, chars }] = await db('chunk_group_bookmarks as b')
    .join('chunk_groups as g', 'g.id', 'b.group_id')
    .join('chunks as c', 'c.id', 'b.chunk_id')
    .where('g.file_id', fileId)
    .select(db.raw('count(*) as n'), db.raw('coalesce(sum(length(c.chunk_html)), 0) as chars'));
  const chunks = Number(n);
  if (chunks !== event.data.chunks_created || chunks === 0)
    throw new Error(`${corpus} corpus: the event says ${event.data.chunks_created} chunks, the file's group holds ${chunks}`);
  const totalS = (done - t0) / 1000;
  const run: IngestRun = {
    corpus,
    file_bytes: bytes,
    text_chars: Number(chars),
    chunks,
    upload_s: round((uploaded - t0) / 1000),
    ingest_s: round((done - uploaded) / 1000),
    total_s: round(totalS),
    mb_per_s: round(bytes / 1e6 / totalS),
    chunks_per_s: round(chunks / totalS),
    rss_peak_mib: Math.round(peak),
  };
  log(`${corpus}: ${fmt(bytes / MIB, 2)} MiB -> ${chunks} chunks in ${fmt(totalS, 1)} s (${fmt(run.mb_per_s, 2)} MB/s, ${fmt(run.chunks_per_s, 0)} chunks/s)`);
  return run;
}

/** Polls the dataset's events until the file's completion event (either kind) is there. */
async function completion(
  client: Client,
  datasetId: string,
  fileId: string,
  log: (line: string) => void,
): Promise<{ event_type: string; data: Record<string, any> }> {
  const deadline = Date.now() + 60 * 60_000;
  let failures = 0;
  for (;;) {
    // A poll that fails (a kept-alive connection closed under it, say) is tried again, thrice at most in a row.
    const reply = await getEvents({ client, headers: { 'SVC-Dataset': datasetId }, body: { event_types: ['file_uploaded', 'file_upload_failed'] } }).catch(
      (error: unknown) => ({
        data: undefined,
        error: String(error),
        response: undefined,
      }),
    );
    if (reply.error || !reply.data) {
      const problem = `events poll failed (${reply.response?.status ?? 'no answer'}): ${describeError(reply.error)}`;
      if (++failures > 3) throw new Error(problem);
      log(problem);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    failures = 0;
    const event = reply.data.events.find((e) => JSON.parse(e.event_data).file_id === fileId);
    if (event) return { event_type: event.event_type, data: JSON.parse(event.event_data) };
    if (Date.now() > deadline) throw new Error(`no completion event for file ${fileId} within an hour`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** An error's message with its causes (fetch's own message is only "fetch failed"); other values as JSON. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return JSON.stringify(error);
  const parts: string[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause)
    parts.push(`${e.message}${(e as NodeJS.ErrnoException).code ? ` (${(e as NodeJS.ErrnoException).code})` : ''}`);
  return parts.join(': ');
}

/** Paragraphs of the synthetic help-centre prose (bench/corpus.ts), as plain text, `bytes` long. */
function textCorpus(bytes: number, seed: number): Buffer {
  const parts: string[] = [];
  let size = 0;
  for (let round = 0; size < bytes; round++) {
    for (const chunk of generateCorpus({ count: 2000, seed: seed + round * 7919 })) {
      const paragraph = `${innerText(chunk.chunk_html!)}\n\n`;
      parts.push(paragraph);
      size += Buffer.byteLength(paragraph);
      if (size >= bytes) break;
    }
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

/** A PDF of `pages` pages of the same prose, 10 pt Helvetica, about 50 lines of 95 characters a page. */
async function pdfCorpus(pages: number, seed: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  // Fixed dates: the same options give the same bytes.
  doc.setCreationDate(new Date(0));
  doc.setModificationDate(new Date(0));
  doc.setProducer('bench');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const words = textCorpus(pages * 5000, seed)
    .toString()
    .split(/\s+/)
    .filter(Boolean);
  let next = 0;
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage([612, 792]);
    for (let line = 0; line < 50 && next < words.length; line++) {
      let text = '';
      while (next < words.length && text.length + words[next].length < 95) text += (text ? ' ' : '') + words[next++];
      page.drawText(text, { x: 40, y: 760 - line * 14, size: 10, font });
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

export function formatFilesIngest(mode: string, result: FilesIngestResult): string {
  const rows: (string | number)[][] = [['corpus', 'file MiB', 'chunks', 'upload s', 'ingest s', 'total s', 'MB/s', 'chunks/s', 'peak RSS MiB']];
  for (const r of result.runs) {
    rows.push([
      r.corpus,
      fmt(r.file_bytes / MIB, 2),
      r.chunks,
      fmt(r.upload_s, 2),
      fmt(r.ingest_s, 2),
      fmt(r.total_s, 2),
      fmt(r.mb_per_s, 2),
      fmt(r.chunks_per_s, 0),
      r.rss_peak_mib,
    ]);
  }
  return `File ingestion, ${mode} (${result.engines.store}, ${result.engines.lexical}, ${result.engines.workflows}): upload through POST /api/file (multipart) to the file_uploaded event\n${table(rows)}`;
}
