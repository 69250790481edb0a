// Pages a crawler delivers: authenticated by the crawl's scrape id and the webhook secret the
// service issued for it, stored as an HTML (or Markdown) file of the crawl's dataset and ingested.
import { Readable } from 'node:stream';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import type { Services } from '../../services.js';
import type { DatasetRow } from '../datasets.js';
import { isUuid } from '../ids.js';
import { crawlWebhookSecret, sameSecret } from './links.js';
import { describeFile } from './options.js';
import { storeNewFile } from './upload.js';

export async function receiveHtmlPage(services: Services, request: T.UploadHtmlPageReqPayload): Promise<void> {
  const db = services.store.db;
  const metadata = request.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw badRequest('metadata: must be an object with dataset_id and webhook_secret');
  }
  const { dataset_id: datasetId, webhook_secret: secret } = metadata as Record<string, unknown>;
  if (typeof datasetId !== 'string' || !isUuid(datasetId)) throw badRequest("metadata.dataset_id: must be the id of the crawl's dataset");
  if (typeof secret !== 'string' || secret === '') throw badRequest('metadata.webhook_secret: must be the secret issued for the crawl');
  const crawl = await db('crawl_requests').where({ scrape_id: request.scrapeId }).first('dataset_id');
  if (!crawl) throw notFound(`scrapeId ${request.scrapeId} is not the scrape id of any crawl`);
  if (!sameSecret(secret, await crawlWebhookSecret(services, request.scrapeId))) {
    throw forbidden('metadata.webhook_secret: does not match the secret issued for this crawl');
  }
  if (crawl.dataset_id !== datasetId) throw forbidden(`metadata.dataset_id: crawl ${request.scrapeId} belongs to another dataset`);
  const dataset = await db<DatasetRow>('datasets').where({ id: datasetId, deleted: 0 }).first();
  if (!dataset) throw notFound(`dataset ${datasetId} not found`);

  const page = request.data;
  const html = nonEmpty(page.html) ?? nonEmpty(page.rawHtml);
  const content = html ?? nonEmpty(page.markdown);
  if (content === null) throw badRequest('data: the page has none of html, rawHtml and markdown');
  const info = page.metadata ?? {};
  const title = nonEmpty(info.title) ?? nonEmpty(info.sourceURL) ?? 'page';
  const pageMetadata = Object.fromEntries(Object.entries(info).filter(([, v]) => v !== null && v !== undefined));
  const description = describeFile(`${title.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 1000)}${html ? '.html' : '.md'}`, {
    link: info.sourceURL ?? null,
    metadata: pageMetadata,
  });
  await storeNewFile(services, dataset, description, {
    stream: Readable.from([Buffer.from(content)]),
    field: 'data',
    declaredType: html ? 'text/html' : 'text/markdown',
  });
}

function nonEmpty(text: string | null | undefined): string | null {
  return text && text.trim() !== '' ? text : null;
}
