// What extraction gives the ingestion: a document whose text can be read (more than once) in
// segments, or one whose records (CSV rows, JSONL lines, JSON array items) become one chunk each.
import type { Readable } from 'node:stream';

/** A file that cannot be turned into text: unsupported type, broken content. Retrying does not help. */
export class UnreadableFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableFileError';
  }
}

export type FileKind = 'text' | 'markdown' | 'html' | 'pdf' | 'docx' | 'csv' | 'jsonl' | 'json';

/** One record of a CSV, JSONL or JSON file: usually an object of field values. */
export type Row = unknown;

export type ExtractedDocument =
  | {
      kind: FileKind;
      shape: 'text';
      /** The text in segments; each call reads the file again (or a copy kept in memory). */
      text(): AsyncIterable<string>;
    }
  | {
      kind: FileKind;
      shape: 'rows';
      rows(): AsyncIterable<Row>;
    };

/** Opens the stored bytes from the start; every call is a new stream. */
export type OpenFile = () => Readable;

/**
 * Formats whose libraries need the whole file in memory (PDF, DOCX, a JSON document that is not
 * an array) are refused above this size, so one upload cannot exhaust the service's memory.
 */
export const MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
