// The signed links of files, served outside the contract's operations (they take no API key, and
// their bodies are a file's raw bytes): GET downloads a file's bytes, PUT delivers the bytes of a
// CSV/JSONL file that is awaiting them. Mounted before the JSON body parser, which must not read them.
import { Router, type Request } from 'express';
import { pipeline } from 'node:stream/promises';
import { contentPath, verifyLink } from '../domain/files/links.js';
import { receiveCsvJsonlBytes } from '../domain/files/csvJsonl.js';
import { fileRecord, type FileRow } from '../domain/files/records.js';
import { isUuid } from '../domain/ids.js';
import { ObjectNotFoundError } from '../engines/storage/types.js';
import { notFound, payloadTooLarge } from '../errors.js';
import type { Services } from '../services.js';
import { closeAfterEarlyAnswer, detachedBody } from './earlyAnswer.js';

export function fileContentRouter(services: Services): Router {
  const router = Router();
  const path = contentPath(':fileId');

  router.get(path, async (req, res) => {
    const fileId = fileIdOf(req);
    const { contentType } = await verifyLink(services, 'download', fileId, req.query as Record<string, unknown>);
    const file = await services.store.db<FileRow>('files').where({ id: fileId }).whereNotIn('status', ['deleting']).first();
    if (!file) throw notFound(`file ${fileId} not found`);
    if (!file.storage_key) throw notFound(`file ${fileId} has no bytes yet: they have not been uploaded`);
    const bytes = services.storage.get(file.storage_key);
    // The first read tells whether the bytes exist, before the headers are committed.
    await new Promise<void>((resolve, reject) => {
      bytes.once('readable', resolve);
      bytes.once('error', reject);
    }).catch((error) => {
      throw error instanceof ObjectNotFoundError ? notFound(`the bytes of file ${fileId} are missing from storage`) : error;
    });
    res.status(200);
    res.setHeader('Content-Type', contentType ?? file.mime_type ?? 'application/octet-stream');
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.file_name)}`);
    if (file.sha256) res.setHeader('ETag', `"${file.sha256}"`);
    res.setHeader('Cache-Control', 'private, no-store');
    await pipeline(bytes, res);
  });

  router.put(path, async (req, res) => {
    closeAfterEarlyAnswer(req, res);
    const fileId = fileIdOf(req);
    await verifyLink(services, 'upload', fileId, req.query as Record<string, unknown>);
    const limit = services.config.fileUploadLimit;
    const declared = Number(req.get('content-length') ?? NaN);
    if (declared > limit) throw payloadTooLarge(`body: ${declared} bytes is over the upload limit of ${limit} bytes`);
    const row = await receiveCsvJsonlBytes(services, fileId, { stream: detachedBody(req), declaredType: req.get('content-type') });
    res.status(200).json({ file_metadata: fileRecord(row) });
  });

  return router;
}

function fileIdOf(req: Request): string {
  const fileId = String(req.params.fileId);
  if (!isUuid(fileId)) throw notFound(`file ${fileId} not found`);
  return fileId;
}
