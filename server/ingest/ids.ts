// Ids derived from the file, so that a retried or replayed step of an ingestion writes the same
// rows again instead of new ones: name-based UUIDs (version 5, SHA-1) in a namespace of our own.
import { createHash } from 'node:crypto';

/** This service's namespace for file-derived ids (a fixed random UUID). */
const NAMESPACE = Buffer.from('6f1c2a4e9b7d4c3a8e5f0d2b1a9c7e63', 'hex');

export function nameBasedUuid(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The chunk made from the file's piece at `position` (0-based, in file order). */
export const fileChunkId = (fileId: string, position: number) => nameBasedUuid(`file-chunk:${fileId}:${position}`);

/** The chunk group that holds the file's chunks. */
export const fileGroupId = (fileId: string) => nameBasedUuid(`file-group:${fileId}`);
