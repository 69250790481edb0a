// POST /api/file as multipart/form-data, the file part streamed with back-pressure and a
// Content-Length, as a client uploading a large file sends it. Shared by the file benches.
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { ADMIN_KEY } from './modes.js';

export interface MultipartFile {
  /** The option fields sent before the file part. */
  fields?: Record<string, string>;
  fileName: string;
  contentType: string;
  size: number;
  body: Readable;
}

/** Uploads the file and answers the new file's id (any status but 200 is an error). */
export function postMultipart(url: string, datasetId: string, file: MultipartFile): Promise<string> {
  const boundary = '----bench-multipart-boundary';
  const fields = Object.entries(file.fields ?? {})
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
    .join('');
  const head = Buffer.from(
    `${fields}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.fileName}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/api/file`, {
      method: 'POST',
      headers: {
        authorization: ADMIN_KEY,
        'SVC-Dataset': datasetId,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + file.size + tail.length),
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (d: Buffer) => parts.push(d));
      response.on('end', () => {
        const body = Buffer.concat(parts).toString();
        if (response.statusCode !== 200) return reject(new Error(`multipart upload answered ${response.statusCode}: ${body}`));
        resolve(JSON.parse(body).file_metadata.id);
      });
    });
    request.write(head);
    pipeline(file.body, request, { end: false }).then(() => request.end(tail), reject);
  });
}
