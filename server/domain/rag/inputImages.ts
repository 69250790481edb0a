// The images a caller gives to edit, as bytes: base64 decoded here, URLs fetched under the outbound
// rules (a tenant's URL reaches no private address and never carries an instance key). Together
// they are bounded, and each must be PNG, JPEG or WebP by its first bytes.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { ImageFile } from '../../engines/llm/images.js';
import { OutboundRefusedError, OutboundUnreachableError, outboundFetch, type OutboundSettings } from '../../engines/outbound.js';
import { badRequest, HttpError } from '../../errors.js';
import { decodeBase64, imageTypeOf } from './media.js';

/** All images of a request together, decoded: room for several large photos, a bound on what one request holds in memory. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;
const TYPES = ['image/png', 'image/jpeg', 'image/webp'];

export async function inputImages(outbound: OutboundSettings, images: T.ImageUpload[], mimeType: string | null | undefined): Promise<ImageFile[]> {
  const wanted = mimeType === 'application/octet-stream' ? null : (mimeType ?? null);
  if (wanted && !TYPES.includes(wanted)) throw badRequest(`mime_type: ${wanted} is not supported (${TYPES.join(', ')} or application/octet-stream)`);
  const tooLarge = `input_images: the images are over the limit of ${MAX_IMAGE_BYTES} bytes together`;
  const files: ImageFile[] = [];
  let left = MAX_IMAGE_BYTES;
  for (const [i, image] of images.entries()) {
    const field = `input_images[${i}]`;
    const bytes =
      'base64' in image.image_src
        ? decodeBase64(image.image_src.base64, `${field}.image_src.base64`, left, tooLarge)
        : await fetchImage(outbound, image.image_src.url, `${field}.image_src.url`, left, tooLarge);
    const type = imageTypeOf(bytes);
    if (!type) throw badRequest(`${field} is not a PNG, JPEG or WebP image`);
    if (wanted && type !== wanted) throw badRequest(`${field} is ${type}, not the mime_type ${wanted}`);
    files.push({ name: image.file_name, type, bytes });
    left -= bytes.length;
  }
  return files;
}

/** The body at `url`, read up to `maxBytes`; a 400 naming `field` for every way it can fail. */
async function fetchImage(outbound: OutboundSettings, url: string, field: string, maxBytes: number, tooLarge: string): Promise<Buffer> {
  try {
    const response = await outboundFetch(outbound, url, { timeoutMs: FETCH_TIMEOUT_MS });
    if (!response.ok) {
      await response.body?.cancel();
      throw badRequest(`${field}: the server answered with status ${response.status}`);
    }
    const parts: Buffer[] = [];
    let size = 0;
    for await (const part of response.body ?? []) {
      size += part.length;
      // Leaving the loop cancels the rest of the body.
      if (size > maxBytes) throw badRequest(tooLarge);
      parts.push(Buffer.from(part));
    }
    if (size === 0) throw badRequest(`${field}: the server answered an empty body`);
    return Buffer.concat(parts);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    if (error instanceof OutboundRefusedError || error instanceof OutboundUnreachableError) throw badRequest(`${field}: ${error.message}`);
    // The body broke off or its time ran out while being read.
    throw badRequest(`${field}: the image could not be read whole`);
  }
}
