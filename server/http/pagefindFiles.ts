// The files of datasets' Pagefind indexes, served outside the contract's operations as a static
// site is: no key (the build's random id in the path is what opens it), from any origin (Pagefind's
// client is loaded by pages elsewhere), cached for good (a build's files never change). Only the
// files of a dataset's current index are served.
import { Router, type Request } from 'express';
import { pipeline } from 'node:stream/promises';
import { lookup } from 'mime-types';
import { buildStoragePrefix, findBuild } from '../domain/pagefind/builds.js';
import { pagefindPath } from '../domain/pagefind/index.js';
import { isUuid } from '../domain/ids.js';
import { ObjectNotFoundError } from '../engines/storage/types.js';
import { notFound } from '../errors.js';
import type { Services } from '../services.js';

export function pagefindFilesRouter(services: Services): Router {
  const router = Router();
  router.get(`${pagefindPath(':datasetId', ':buildId')}/*file`, async (req, res) => {
    const { datasetId, buildId, file } = partsOf(req);
    const build = await findBuild(services.store.db, datasetId, buildId);
    if (build?.status !== 'ready') throw notFound(`no Pagefind index ${buildId} of dataset ${datasetId}: it was replaced by a newer build, or never was`);
    const bytes = services.storage.get(`${buildStoragePrefix(datasetId, buildId)}/${file}`);
    // The first read tells whether the file exists, before the headers are committed.
    await new Promise<void>((resolve, reject) => {
      bytes.once('readable', resolve);
      bytes.once('error', reject);
    }).catch((error) => {
      throw error instanceof ObjectNotFoundError ? notFound(`the Pagefind index has no file ${file}`) : error;
    });
    res.status(200);
    res.setHeader('Content-Type', contentTypeOf(file));
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    await pipeline(bytes, res);
  });
  return router;
}

function partsOf(req: Request): { datasetId: string; buildId: string; file: string } {
  const { datasetId, buildId } = req.params as Record<string, string>;
  const segments = (req.params as unknown as { file: string[] }).file;
  const file = segments.join('/');
  // Keys are made of safe segments only (storage/types.ts); anything else is no file of an index.
  const safe = segments.every((s) => /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(s));
  if (!isUuid(datasetId) || !isUuid(buildId) || !safe) throw notFound(`no Pagefind file ${req.path}`);
  return { datasetId, buildId, file };
}

function contentTypeOf(file: string): string {
  const type = lookup(file);
  if (type === 'application/javascript' || type === 'text/javascript') return 'text/javascript; charset=utf-8';
  if (type === 'application/json' || type === 'text/css') return `${type}; charset=utf-8`;
  // Pagefind's own files (.pf_fragment, .pf_index, .pf_meta, .pf_filter, .pagefind) are bytes it reads itself.
  return type || 'application/octet-stream';
}
