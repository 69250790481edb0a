// Turns a stored file into an extracted document, choosing the extractor by kind. Text, Markdown,
// HTML, CSV and JSONL stream from storage with bounded memory; PDF and DOCX are read whole (up to
// MAX_BUFFERED_BYTES) and their text kept in memory while the document is split.
import { kindByName, looksLikeText, magicMismatch } from './detect.js';
import { docxText } from './docx.js';
import { htmlText } from './html.js';
import { pdfPages } from './pdf.js';
import { csvRows, jsonlRows, jsonRows } from './rows.js';
import { decodeText, readAll, readHead } from './stream.js';
import { UnreadableFileError, type ExtractedDocument, type FileKind, type OpenFile } from './types.js';

export { UnreadableFileError, type ExtractedDocument, type FileKind, type OpenFile, type Row } from './types.js';

export interface FileToExtract {
  fileName: string;
  mimeType?: string | null;
  open: OpenFile;
}

const HEAD_BYTES = 8192;

/** The file's document; throws UnreadableFileError for a type that cannot be read or a broken file. */
export async function extractDocument(file: FileToExtract): Promise<ExtractedDocument> {
  const head = await readHead(file.open(), HEAD_BYTES);
  if (head.length === 0) throw new UnreadableFileError('the file is empty');
  const kind = kindByName(file.fileName, file.mimeType) ?? (looksLikeText(head) ? 'text' : null);
  if (!kind) {
    const type = file.mimeType ? ` (${file.mimeType})` : '';
    throw new UnreadableFileError(
      `${file.fileName}${type}: this type of file cannot be read as text; supported are plain text, Markdown, HTML, PDF, DOCX, CSV, JSON and JSONL`,
    );
  }
  const mismatch = magicMismatch(kind, head);
  if (mismatch) throw new UnreadableFileError(`${file.fileName}: ${mismatch}`);
  return open(kind, file.open);
}

async function open(kind: FileKind, openFile: OpenFile): Promise<ExtractedDocument> {
  switch (kind) {
    case 'text':
    case 'markdown':
      return { kind, shape: 'text', text: () => decodeText(openFile()) };
    case 'html':
      return { kind, shape: 'text', text: () => htmlText(openFile()) };
    case 'pdf': {
      const pages = await pdfPages(await readAll(openFile(), 'PDF'));
      return { kind, shape: 'text', text: () => joined(pages) };
    }
    case 'docx': {
      const text = await docxText(await readAll(openFile(), 'DOCX'));
      return { kind, shape: 'text', text: () => joined([text]) };
    }
    case 'csv':
      return { kind, shape: 'rows', rows: () => csvRows(openFile()) };
    case 'jsonl':
      return { kind, shape: 'rows', rows: () => jsonlRows(openFile()) };
    case 'json':
      return { kind, shape: 'rows', rows: () => jsonRows(openFile) };
  }
}

/** Pages (or one text) as segments, a line break between pages so that a page's last sentence ends there. */
async function* joined(pages: string[]): AsyncGenerator<string> {
  for (let i = 0; i < pages.length; i++) yield i === 0 ? pages[i] : `\n${pages[i]}`;
}
