// The SDK's multipart uploads: the options as fields before the file part, arrays and objects as
// JSON text, and a stream framed by hand that a multipart parser (busboy, set as the service sets it)
// reads back exactly, its file name encoded as browsers encode it.
import busboy from 'busboy';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type UploadFileMultipart, uploadBody } from '../../sdk/src/upload.js';

interface Parsed {
  order: string[];
  fields: Record<string, string>;
  file: { name: string; bytes: string };
}

/** The form as the service's parser reads it. */
async function parse(body: BodyInit, contentType?: string): Promise<Parsed> {
  const request = new Request('http://service/api/file', { method: 'POST', body, duplex: 'half' } as RequestInit);
  const type = contentType ?? request.headers.get('content-type')!;
  const parsed: Parsed = { order: [], fields: {}, file: { name: '', bytes: '' } };
  await new Promise<void>((resolve, reject) => {
    const form = busboy({ headers: { 'content-type': type }, defParamCharset: 'utf8' });
    form.on('field', (name, value) => {
      parsed.order.push(name);
      parsed.fields[name] = value;
    });
    form.on('file', (name, stream, info) => {
      parsed.order.push(name);
      parsed.file.name = info.filename ?? '';
      stream.on('data', (d: Buffer) => (parsed.file.bytes += d.toString()));
    });
    form.on('close', resolve);
    form.on('error', reject);
    Readable.fromWeb(request.body! as never).pipe(form);
  });
  return parsed;
}

const options: Omit<UploadFileMultipart, 'file'> = {
  tag_set: ['a', 'b'],
  metadata: { source: 'test' },
  create_chunks: false,
  target_splits_per_chunk: 3,
  description: null,
};

describe('uploadBody', () => {
  it('puts a Blob in a FormData after the option fields', async () => {
    const { body, contentType } = uploadBody({ ...options, file: new Blob(['the bytes']), file_name: 'notes.md' });
    expect(body).toBeInstanceOf(FormData);
    expect(contentType).toBeUndefined();
    expect(await parse(body)).toEqual({
      order: ['tag_set', 'metadata', 'create_chunks', 'target_splits_per_chunk', 'file'],
      fields: { tag_set: '["a","b"]', metadata: '{"source":"test"}', create_chunks: 'false', target_splits_per_chunk: '3' },
      file: { name: 'notes.md', bytes: 'the bytes' },
    });
  });

  it("takes a File's own name", async () => {
    const { body } = uploadBody({ file: new File(['x'], 'own name.txt') });
    expect((await parse(body)).file.name).toBe('own name.txt');
  });

  it('frames a stream as it is read, the same form', async () => {
    const name = 'Zürich "report"\r\n2026.txt';
    const { body, contentType } = uploadBody({ ...options, file: Readable.from([Buffer.from('the '), Buffer.from('bytes')]), file_name: name });
    expect(body).toBeInstanceOf(ReadableStream);
    expect(contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(await parse(body, contentType)).toEqual({
      order: ['tag_set', 'metadata', 'create_chunks', 'target_splits_per_chunk', 'file'],
      fields: { tag_set: '["a","b"]', metadata: '{"source":"test"}', create_chunks: 'false', target_splits_per_chunk: '3' },
      file: { name: 'Zürich %22report%22%0D%0A2026.txt', bytes: 'the bytes' },
    });
  });

  it('needs a file name for bytes that have none', () => {
    expect(() => uploadBody({ file: new Blob(['x']) })).toThrow(/file_name/);
  });
});
