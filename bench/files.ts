// The file upload suite: a large file (100 MB by default) uploaded through the streamed multipart
// route of POST /api/file while the service's resident memory is sampled. The service runs in a
// process of its own (`node --import tsx server/main.ts`), so the figures are its memory alone, not
// the client's. For contrast, a 10 MB file goes through the base64 JSON body, which is held in
// memory whole. A small upload first warms the service up. Each upload is checked: the bytes downloaded back have the SHA-256 of those sent.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { createClient } from '../sdk/src/generated/client/index.js';
import { createDataset, createOrganization, getFileHandler } from '../sdk/src/generated/sdk.gen.js';
import { ADMIN_KEY, type ModeEnvironment } from './modes.js';
import { postMultipart } from './multipart.js';
import { fmt, table } from './report.js';
import { spawnService, type ServiceProcess } from './service-process.js';

const MIB = 1024 ** 2;

export interface FilesOptions {
  /** Size of the streamed multipart upload, in MiB. */
  sizeMib: number;
}

interface UploadRun {
  route: 'multipart' | 'base64 JSON';
  bytes: number;
  wall_s: number;
  mib_per_s: number;
  /** The service's resident memory just before the upload, at its highest during it, and its growth. */
  rss_before_mib: number;
  rss_peak_mib: number;
  rss_growth_mib: number;
  /** The kernel's high-water mark of the service's resident memory over the upload (VmHWM after a reset). */
  vm_hwm_mib: number | null;
  verified: boolean;
}

export interface FilesResult {
  options: FilesOptions;
  service_idle_rss_mib: number;
  uploads: UploadRun[];
}

export async function runFiles(modeEnv: ModeEnvironment, options: FilesOptions, log: (line: string) => void): Promise<FilesResult> {
  const env = await modeEnv.freshEnv();
  const service = await spawnService({ ...env, LOG_LEVEL: 'warn' }, log);
  try {
    const client = createClient({ baseUrl: service.url, auth: () => ADMIN_KEY });
    const org = await createOrganization({ client, body: { name: 'bench-files' } });
    const dataset = await createDataset({ client, headers: { 'SVC-Organization': org.data!.id }, body: { dataset_name: 'files' } });
    const datasetId = dataset.data!.id;
    // A first small upload loads what the first of anything loads (the workflow worker's sandbox in
    // full mode, lazily compiled code): those megabytes are not the upload's.
    await multipartUpload(service.url, datasetId, 64 * 1024);
    await settle();
    const idle = rssMib(service.pid);
    log(`service idle at ${fmt(idle, 1)} MiB resident`);

    const uploads: UploadRun[] = [];
    log(`multipart upload of ${options.sizeMib} MiB…`);
    uploads.push(await measure(service, datasetId, 'multipart', options.sizeMib * MIB, log));
    await settle();
    log('base64 JSON upload of 10 MiB…');
    uploads.push(await measure(service, datasetId, 'base64 JSON', 10 * MIB, log));
    return { options, service_idle_rss_mib: idle, uploads };
  } finally {
    await service.stop();
  }
}

export function formatFiles(mode: string, result: FilesResult): string {
  const rows: (string | number)[][] = [['upload', 'size', 'wall', 'throughput', 'RSS before', 'RSS peak', 'growth', 'VmHWM', 'bytes verified']];
  for (const u of result.uploads) {
    rows.push([
      u.route,
      `${fmt(u.bytes / MIB)} MiB`,
      `${fmt(u.wall_s, 2)} s`,
      `${fmt(u.mib_per_s, 1)} MiB/s`,
      `${fmt(u.rss_before_mib, 1)} MiB`,
      `${fmt(u.rss_peak_mib, 1)} MiB`,
      `${fmt(u.rss_growth_mib, 1)} MiB`,
      u.vm_hwm_mib === null ? '–' : `${fmt(u.vm_hwm_mib, 1)} MiB`,
      u.verified ? 'yes' : 'NO',
    ]);
  }
  return [`files (${mode}): the service's resident memory while it receives an upload (idle: ${fmt(result.service_idle_rss_mib, 1)} MiB)`, table(rows)].join(
    '\n',
  );
}

async function measure(service: ServiceProcess, datasetId: string, route: UploadRun['route'], bytes: number, log: (line: string) => void): Promise<UploadRun> {
  const hwmReset = resetHighWaterMark(service.pid);
  const before = rssMib(service.pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMib(service.pid));
  }, 10);
  const t0 = performance.now();
  let sent: { fileId: string; sha256: string };
  try {
    sent = route === 'multipart' ? await multipartUpload(service.url, datasetId, bytes) : await base64Upload(service.url, datasetId, bytes);
  } finally {
    clearInterval(sampler);
  }
  const wall = (performance.now() - t0) / 1000;
  peak = Math.max(peak, rssMib(service.pid));
  const hwm = hwmReset ? highWaterMarkMib(service.pid) : null;
  const verified = (await downloadedSha256(service.url, datasetId, sent.fileId)) === sent.sha256;
  log(
    `${route}: ${fmt(bytes / MIB)} MiB in ${fmt(wall, 2)} s, RSS ${fmt(before, 1)} → peak ${fmt(peak, 1)} MiB${verified ? '' : ' — DOWNLOADED BYTES DIFFER'}`,
  );
  if (!verified) throw new Error(`${route} upload: the bytes downloaded back differ from those sent`);
  return {
    route,
    bytes,
    wall_s: wall,
    mib_per_s: bytes / MIB / wall,
    rss_before_mib: before,
    rss_peak_mib: peak,
    rss_growth_mib: peak - before,
    vm_hwm_mib: hwm,
    verified,
  };
}

/** Text lines, deterministic, generated as they are sent: the client never holds the file either. */
function* fileChunks(bytes: number): Generator<Buffer> {
  const line = Buffer.from('The quick brown fox jumps over the lazy dog; refunds are paid within fourteen days.\n');
  const block = Buffer.concat(Array.from({ length: Math.ceil((256 * 1024) / line.length) }, () => line)).subarray(0, 256 * 1024);
  for (let sent = 0; sent < bytes; sent += block.length) yield block.subarray(0, Math.min(block.length, bytes - sent));
}

/** The multipart upload of `bytes` generated bytes, hashed as sent. `create_chunks` is false: the upload alone is measured. */
async function multipartUpload(url: string, datasetId: string, bytes: number): Promise<{ fileId: string; sha256: string }> {
  const hash = createHash('sha256');
  const body = Readable.from(
    (function* () {
      for (const block of fileChunks(bytes)) {
        hash.update(block);
        yield block;
      }
    })(),
  );
  const fileId = await postMultipart(url, datasetId, {
    fields: { create_chunks: 'false' },
    fileName: 'large.txt',
    contentType: 'text/plain',
    size: bytes,
    body,
  });
  return { fileId, sha256: hash.digest('hex') };
}

async function base64Upload(url: string, datasetId: string, bytes: number): Promise<{ fileId: string; sha256: string }> {
  const file = Buffer.concat([...fileChunks(bytes)]);
  const body = JSON.stringify({ base64_file: file.toString('base64'), file_name: 'medium.txt', create_chunks: false });
  const response = await fetch(`${url}/api/file`, {
    method: 'POST',
    headers: { authorization: ADMIN_KEY, 'SVC-Dataset': datasetId, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`base64 upload answered ${response.status}: ${text}`);
  return { fileId: JSON.parse(text).file_metadata.id, sha256: createHash('sha256').update(file).digest('hex') };
}

async function downloadedSha256(url: string, datasetId: string, fileId: string): Promise<string> {
  const client = createClient({ baseUrl: url, auth: () => ADMIN_KEY });
  const { data } = await getFileHandler({ client, headers: { 'SVC-Dataset': datasetId }, path: { file_id: fileId } });
  const response = await fetch(data!.s3_url);
  const hash = createHash('sha256');
  const reader = response.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) hash.update(read.value);
  return hash.digest('hex');
}

function rssMib(pid: number): number {
  return statusField(pid, 'VmRSS') / 1024;
}

function highWaterMarkMib(pid: number): number {
  return statusField(pid, 'VmHWM') / 1024;
}

/** Resets the kernel's resident high-water mark of the process (Linux: `5` into clear_refs); false when not allowed. */
function resetHighWaterMark(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** A `/proc/<pid>/status` field in KiB. */
function statusField(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]);
}

/** Lets the service's garbage collector and background work calm down between measurements. */
function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, 1500));
}
