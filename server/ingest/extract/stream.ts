// Reading stored bytes: as decoded text in segments, or whole into memory up to a limit.
import type { Readable } from 'node:stream';
import { MAX_BUFFERED_BYTES, UnreadableFileError } from './types.js';

/** The stream's bytes as UTF-8 text segments (a leading byte order mark dropped; bad bytes become U+FFFD). */
export async function* decodeText(stream: Readable): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  for await (const chunk of stream) {
    const text = decoder.decode(chunk as Uint8Array, { stream: true });
    if (text) yield text;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/** The whole stream in one buffer; a file over `limit` bytes is refused, naming the format. */
export async function readAll(stream: Readable, format: string, limit = MAX_BUFFERED_BYTES): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new UnreadableFileError(`${format} files over ${Math.round(limit / 1024 / 1024)} MB cannot be extracted`);
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts, size);
}

/** The first `bytes` bytes of the stream (fewer when it is shorter); the stream is closed after. */
export async function readHead(stream: Readable, bytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      parts.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= bytes) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(parts, size).subarray(0, bytes);
}
