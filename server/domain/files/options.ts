// Checks what an upload says about its file (name, tags, time stamp, ingestion options) before any
// byte is stored, so bad input is refused with the field named instead of failing later.
import mime from 'mime-types';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';
import { parseTimeStamp } from '../chunks/input.js';
import { joinTags } from './records.js';

/** What the files row records about a file, besides its bytes. */
export interface FileDescription {
  fileName: string;
  link: string | null;
  metadata: Record<string, unknown> | null;
  /** Comma-separated. */
  tagSet: string | null;
  /** `YYYY-MM-DD HH:MM:SS.mmm`, UTC. */
  timeStamp: string | null;
  /** The request's options as sent, for the ingestion. */
  ingestOptions: Record<string, unknown>;
}

/** The fields of any upload request: the file options, or the CSV/JSONL ones. */
type UploadFields = T.UploadFileOptions & Partial<T.CreatePresignedUrlForCsvJsonlReqPayload>;

/** Fields that carry the file itself or its name, not options of its ingestion. */
const NOT_OPTIONS = new Set(['base64_file', 'file', 'file_name']);

export function describeFile(fileName: string | null | undefined, fields: UploadFields): FileDescription {
  const name = checkFileName(fileName);
  (fields.tag_set ?? []).forEach((tag, i) => {
    if (tag.includes(',')) throw badRequest(`tag_set[${i}]: ${JSON.stringify(tag)} contains a comma; a file's tags are kept comma-separated`);
    if (tag.trim() === '') throw badRequest(`tag_set[${i}]: a tag may not be empty`);
  });
  if (fields.webhook_url != null && !isHttpUrl(fields.webhook_url)) {
    throw badRequest(`webhook_url: ${fields.webhook_url} is not an http or https URL`);
  }
  if (fields.pdf2md_options?.use_pdf2md_ocr) {
    throw badRequest('pdf2md_options.use_pdf2md_ocr: converting files with a vision model is not available in this service; leave it false');
  }
  if (fields.chunkr_create_task_req_payload != null) {
    throw badRequest('chunkr_create_task_req_payload: the external layout service is not available in this service; leave it out');
  }
  const ingestOptions = Object.fromEntries(Object.entries(fields).filter(([key, value]) => !NOT_OPTIONS.has(key) && value !== undefined));
  return {
    fileName: name,
    link: fields.link ?? null,
    metadata: fields.metadata ?? null,
    tagSet: joinTags(fields.tag_set),
    timeStamp: parseTimeStamp(fields.time_stamp, ''),
    ingestOptions,
  };
}

function checkFileName(fileName: string | null | undefined): string {
  const name = fileName?.trim() ?? '';
  if (name === '') throw badRequest('file_name: give the name of the file, with its extension');
  if (name.length > 1024) throw badRequest(`file_name: ${name.length} characters is over the limit of 1024`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw badRequest('file_name: may not contain control characters');
  return name;
}

/** The file's media type: by its name's extension, else what the client declared, else bytes. */
export function mimeTypeOf(fileName: string, declared?: string | null): string {
  const byName = mime.lookup(fileName);
  if (byName) return byName;
  if (declared && declared !== 'application/octet-stream') return declared;
  return 'application/octet-stream';
}

function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}
