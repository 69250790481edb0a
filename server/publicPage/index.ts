// A public dataset's page, from the dataset's id or tracking id to the HTML and its headers.
import type { Knex } from 'knex';
import { datasetConfig } from '../domain/datasetConfig.js';
import { findPublicDataset } from '../domain/publicPage/dataset.js';
import { publicPageKey } from '../domain/publicPage/keys.js';
import { type RenderedPage, renderPage } from './render.js';
import { pageScript } from './script.js';
import { pagePreview, pageSettings } from './settings.js';

export async function publicPage(db: Knex, datasetIdOrTrackingId: string): Promise<RenderedPage> {
  const dataset = await findPublicDataset(db, datasetIdOrTrackingId);
  const options = datasetConfig(dataset).PUBLIC_DATASET.extra_params;
  const [apiKey, script] = await Promise.all([publicPageKey(db, dataset), pageScript()]);
  const settings = pageSettings(dataset, options, apiKey);
  return renderPage(settings, pagePreview(settings, options), script);
}
