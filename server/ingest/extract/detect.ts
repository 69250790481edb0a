// Which extractor a file gets: by its name's extension, else by its declared type, else by
// looking at its first bytes (text that decodes as UTF-8 is read as plain text).
import path from 'node:path';
import type { FileKind } from './types.js';

const BY_EXTENSION: Record<string, FileKind> = {
  '.txt': 'text',
  '.text': 'text',
  '.log': 'text',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.csv': 'csv',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'json',
};

const BY_MIME_TYPE: Record<string, FileKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/csv': 'csv',
  'application/jsonl': 'jsonl',
  'application/x-ndjson': 'jsonl',
  'application/x-jsonlines': 'jsonl',
  'application/json': 'json',
};

/** The kind the name or the declared type gives, or null when neither is known. */
export function kindByName(fileName: string, mimeType?: string | null): FileKind | null {
  const byName = BY_EXTENSION[path.extname(fileName).toLowerCase()];
  if (byName) return byName;
  const declared = mimeType?.split(';')[0].trim().toLowerCase();
  return (declared && BY_MIME_TYPE[declared]) || null;
}

/** Whether the first bytes of a file look like text: no NUL byte, and valid UTF-8 (a cut last character aside). */
export function looksLikeText(head: Buffer): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** The magic bytes of formats that need them, to tell a broken file from a mislabelled one. */
export function magicMismatch(kind: FileKind, head: Buffer): string | null {
  if (kind === 'pdf' && !head.subarray(0, 1024).includes('%PDF-')) return 'it does not start like a PDF file (no %PDF- header)';
  if (kind === 'docx' && !(head[0] === 0x50 && head[1] === 0x4b)) return 'it is not a DOCX file (not a ZIP archive)';
  return null;
}
