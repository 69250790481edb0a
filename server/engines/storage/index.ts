// Picks the file storage once, at start: the bytes live under DATA_DIR/files in both modes for now.
import path from 'node:path';
import { openDiskStorage } from './disk.js';
import type { FileStorage } from './types.js';

export * from './types.js';

export async function openFileStorage(config: { dataDir: string }): Promise<FileStorage> {
  return openDiskStorage(path.join(config.dataDir, 'files'));
}
