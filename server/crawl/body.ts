// A crawled answer's body read whole but bounded: over `maxBytes` (declared or counted) it is not
// read further, and the text is decoded in the charset the server names.
import type { OutboundResponse } from '../engines/outbound.js';

/** The body as text, or null when it is larger than `maxBytes` (what is left of it is not read). */
export async function boundedText(response: OutboundResponse, maxBytes: number): Promise<string | null> {
  const bytes = await boundedBytes(response, maxBytes);
  return bytes && decodeText(bytes, response.headers.get('content-type') ?? '');
}

/** The body's bytes, or null when it is larger than `maxBytes` (what is left of it is not read). */
export async function boundedBytes(response: OutboundResponse, maxBytes: number): Promise<Uint8Array | null> {
  // A declared length spares reading what would be thrown away; an undeclared one is counted.
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  return readCapped(response.body, maxBytes);
}

async function readCapped(body: OutboundResponse['body'], max: number): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(parts);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    parts.push(value);
  }
}

/** The text in the charset the server names; UTF-8 when it names none or one we cannot read. */
export function decodeText(bytes: Uint8Array, contentType: string): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
