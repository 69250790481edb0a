// The body of a multipart upload (`POST /api/file` as `multipart/form-data`): the options as form
// fields, arrays and objects as JSON text, then the file part, as the contract's `UploadFileForm`
// asks. A Blob (or File) goes in a FormData; a stream is framed here and sent as it is read, never
// whole in memory.
import type { UploadFileOptions } from './generated/types.gen.js';

/** The bytes of a file to upload: a Blob or File, a web ReadableStream, or any async iterable of bytes (a Node.js Readable is one). */
export type FileSource = Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** A file sent as a multipart upload, with the options of its ingestion. */
export type UploadFileMultipart = UploadFileOptions & {
  /** The file's bytes. */
  file: FileSource;
  /** The file's name with its extension, which tells its type; a File's own name when missing. */
  file_name?: string;
};

export interface UploadBody {
  body: FormData | ReadableStream<Uint8Array>;
  /** Set for a framed stream; a FormData gets its own from fetch. */
  contentType?: string;
}

export function uploadBody(upload: UploadFileMultipart): UploadBody {
  const { file, file_name, ...options } = upload;
  const name = file_name ?? (typeof File !== 'undefined' && file instanceof File ? file.name : undefined);
  if (!name) throw new TypeError('uploadFile: give `file_name` (with its extension) for a file that is not a File');
  const fields: [string, string][] = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    fields.push([key, typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  }
  if (file instanceof Blob) {
    const form = new FormData();
    for (const [key, value] of fields) form.append(key, value);
    form.append('file', file, name);
    return { body: form };
  }
  // getRandomValues, unlike randomUUID, is there in browsers outside secure contexts too.
  const random = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const boundary = `----chunksearch-${random}`;
  return { body: framed(boundary, fields, name, file), contentType: `multipart/form-data; boundary=${boundary}` };
}

function framed(boundary: string, fields: [string, string][], fileName: string, file: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>) {
  const encoder = new TextEncoder();
  let head = '';
  for (const [key, value] of fields) head += `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(key)}"\r\n\r\n${value}\r\n`;
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(fileName)}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const parts = (async function* () {
    yield encoder.encode(head);
    yield* 'getReader' in file ? chunksOf(file) : file;
    yield encoder.encode(`\r\n--${boundary}--\r\n`);
  })();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await parts.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await parts.return(undefined);
    },
  });
}

async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if ((ended = done)) return;
      yield value;
    }
  } finally {
    if (!ended) await reader.cancel();
    reader.releaseLock();
  }
}

/** A name as browsers put it in a Content-Disposition header: quotes and line breaks percent-encoded. */
function quoted(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
