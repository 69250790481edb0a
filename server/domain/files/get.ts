// A file's record with its signed download link.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import type { Services } from '../../services.js';
import { DEFAULT_DOWNLOAD_TTL_S, signedLink } from './links.js';
import { fileRecord, findFile } from './records.js';

export async function getFile(
  services: Services,
  datasetId: string,
  fileId: string,
  link: { ttlSeconds?: number | null; contentType?: string | null },
): Promise<T.FileDto> {
  const row = await findFile(services.store.db, datasetId, fileId);
  const expiresAt = new Date(Date.now() + (link.ttlSeconds ?? DEFAULT_DOWNLOAD_TTL_S) * 1000);
  return { ...fileRecord(row), s3_url: await signedLink(services, 'download', row.id, expiresAt, link.contentType) };
}
