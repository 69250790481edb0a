// The file storage seam: the bytes of uploaded files, by key. Disk under DATA_DIR/files today, an
// S3-compatible store later; the rest of the service sees only this interface.
import type { Readable } from 'node:stream';

export interface StoredObject {
  /** How many bytes were stored. */
  bytes: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
}

export interface FileStorage {
  readonly kind: 'disk';
  /**
   * Stores `body` under `key`, replacing what was there. The object appears under its key only once
   * every byte is safely written: a failure (the body erroring, more than `maxBytes`, the disk)
   * leaves nothing behind and rejects.
   */
  put(key: string, body: Readable, opts: { maxBytes: number }): Promise<StoredObject>;
  /** The bytes under `key`; the stream errors with ObjectNotFoundError when there are none. */
  get(key: string): Readable;
  /** Removes the object; removing a missing key is no error. */
  remove(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix/` (objects being put meanwhile may stay); none is no error. */
  removeAll(prefix: string): Promise<void>;
}

/** The body was longer than `maxBytes`. */
export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the body is over the limit of ${maxBytes} bytes`);
    this.name = 'ObjectTooLargeError';
  }
}

export class ObjectNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`no stored object under ${key}`);
    this.name = 'ObjectNotFoundError';
  }
}

/** Keys are relative paths of safe segments: letters, digits, `.`, `_` and `-`, joined by `/`. */
export function assertValidKey(key: string): void {
  const segments = key.split('/');
  const ok = key.length > 0 && key.length <= 512 && segments.every((s) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(s));
  if (!ok) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
}
