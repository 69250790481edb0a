// @chunksearch/sdk/node: what only Node.js can do. A file on disk opened as a File, its bytes read
// from disk as they are sent, never whole in memory:
//
//   await chunkSearch.uploadFile({ file: await fileFromPath('report.pdf'), tag_set: ['reports'] });
import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';

/** The file at `path` as a File named by its base name (or `name`), of MIME type `type` when given. */
export async function fileFromPath(path: string, options: { name?: string; type?: string } = {}): Promise<File> {
  const type = options.type ?? '';
  return new File([await openAsBlob(path, { type })], options.name ?? basename(path), { type });
}
