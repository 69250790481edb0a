// Caller media read by their first bytes and decoded strictly (server/domain/rag/media.ts).
import { describe, expect, it } from 'vitest';
import { audioExtensionOf, decodeBase64, imageTypeOf } from '../../server/domain/rag/media.js';
import { HttpError } from '../../server/errors.js';

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('image types', () => {
  it('are PNG, JPEG and WebP by their signatures, and nothing else', () => {
    expect(imageTypeOf(bytes([0x89], 'PNG\r\n\x1a\n', 'rest'))).toBe('image/png');
    expect(imageTypeOf(bytes([0xff, 0xd8, 0xff, 0xdb]))).toBe('image/jpeg');
    expect(imageTypeOf(bytes('RIFF', [1, 2, 3, 4], 'WEBPVP8 '))).toBe('image/webp');
    expect(imageTypeOf(bytes('RIFF', [1, 2, 3, 4], 'WAVEfmt '))).toBeNull();
    expect(imageTypeOf(bytes('GIF89a'))).toBeNull();
    expect(imageTypeOf(bytes([0x89], 'PN'))).toBeNull();
    expect(imageTypeOf(Buffer.alloc(0))).toBeNull();
  });
});

describe('audio formats', () => {
  it('are told by their signatures, with the extension transcription endpoints read', () => {
    expect(audioExtensionOf(bytes('ID3', [4, 0]))).toBe('mp3');
    expect(audioExtensionOf(bytes([0xff, 0xfb, 0x90, 0x64]))).toBe('mp3');
    expect(audioExtensionOf(bytes('RIFF', [0, 0, 0, 0], 'WAVE'))).toBe('wav');
    expect(audioExtensionOf(bytes('OggS', [0]))).toBe('ogg');
    expect(audioExtensionOf(bytes('fLaC', [0]))).toBe('flac');
    expect(audioExtensionOf(bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f]))).toBe('webm');
    expect(audioExtensionOf(bytes([0, 0, 0, 0x20], 'ftypM4A '))).toBe('m4a');
  });

  it('are unknown for other bytes, AAC frames (MPEG sync, layer 0) included', () => {
    expect(audioExtensionOf(bytes([0xff, 0xf1, 0x50, 0x80]))).toBeNull();
    expect(audioExtensionOf(bytes('RIFF', [0, 0, 0, 0], 'WEBP'))).toBeNull();
    expect(audioExtensionOf(bytes('%PDF-1.7'))).toBeNull();
    expect(audioExtensionOf(Buffer.alloc(0))).toBeNull();
  });
});

describe('base64', () => {
  const refusal = (text: string, max = 100) => {
    try {
      decodeBase64(text, 'field', max);
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      return `${(error as HttpError).status} ${(error as HttpError).message}`;
    }
    return null;
  };

  it('decodes padded text, line breaks ignored', () => {
    expect(decodeBase64('aGVs\nbG8=', 'field', 100).toString()).toBe('hello');
    expect(decodeBase64('aGVsbG8', 'field', 5).toString()).toBe('hello');
  });

  it('refuses other characters, a length no base64 has, nothing, and more than the limit', () => {
    expect(refusal('aGVs*G8=')).toBe('400 field is not valid base64');
    expect(refusal('aGVsb')).toBe('400 field is not valid base64');
    expect(refusal('a=b=')).toBe('400 field is not valid base64');
    expect(refusal('')).toBe('400 field is empty');
    expect(refusal('aGVsbG8=', 4)).toBe('400 field is over the limit of 4 bytes');
    expect(refusal('A'.repeat(4000), 10)).toBe('400 field is over the limit of 10 bytes');
  });
});
