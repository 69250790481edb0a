// Media a caller sends in base64 (images to edit, audio to transcribe): decoded strictly, bounded in
// size before decoding, and typed by their first bytes, never by what the caller claims.
import { badRequest } from '../../errors.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The bytes of `text`, or a 400 naming `field`; whitespace (line breaks) is ignored. More than
 * `maxBytes` is refused with `tooLarge`.
 */
export function decodeBase64(text: string, field: string, maxBytes: number, tooLarge = `${field} is over the limit of ${maxBytes} bytes`): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw badRequest(`${field} is not valid base64`);
  // Bounded before any byte is decoded: three bytes per four characters, less the padding.
  if (Math.floor((compact.length * 3) / 4) - 2 > maxBytes) throw badRequest(tooLarge);
  const bytes = Buffer.from(compact, 'base64');
  if (bytes.length === 0) throw badRequest(`${field} is empty`);
  if (bytes.length > maxBytes) throw badRequest(tooLarge);
  return bytes;
}

const startsWith = (bytes: Uint8Array, signature: number[] | string, at = 0) => {
  const expected = typeof signature === 'string' ? [...signature].map((c) => c.charCodeAt(0)) : signature;
  return bytes.length >= at + expected.length && expected.every((b, i) => bytes[at + i] === b);
};

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp';

/** PNG, JPEG or WebP by their signatures; null for anything else. */
export function imageTypeOf(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBP', 8)) return 'image/webp';
  return null;
}

/** The file extension transcription endpoints read the format from; null for an unknown format. */
export function audioExtensionOf(bytes: Uint8Array): string | null {
  if (startsWith(bytes, 'ID3')) return 'mp3';
  // An MPEG audio frame without tags: 11 sync bits, then layer III (bits 01).
  if (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && (bytes[1] & 0x06) === 0x02) return 'mp3';
  if (startsWith(bytes, 'RIFF') && startsWith(bytes, 'WAVE', 8)) return 'wav';
  if (startsWith(bytes, 'OggS')) return 'ogg';
  if (startsWith(bytes, 'fLaC')) return 'flac';
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return 'webm';
  if (startsWith(bytes, 'ftyp', 4)) return 'm4a';
  return null;
}
