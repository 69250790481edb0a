// Which dataset a public page shows: a live dataset of a live organization whose configuration
// makes it public. Any other answers 404, the same as one that does not exist.
import type { Knex } from 'knex';
import { badRequest, notFound } from '../../errors.js';
import { datasetConfig } from '../datasetConfig.js';
import type { DatasetRow } from '../datasets.js';
import { isUuid } from '../ids.js';

/** The public dataset `value` names: its id, or else its tracking id (which must name only one public dataset). */
export async function findPublicDataset(db: Knex, value: string): Promise<DatasetRow> {
  const candidates = db<DatasetRow>('datasets as d')
    .join('organizations as o', 'o.id', 'd.organization_id')
    .where({ 'd.deleted': 0, 'o.deleted': 0 })
    .whereRaw(`d.server_configuration -> 'PUBLIC_DATASET' ->> 'enabled' = 'true'`)
    .select('d.*');
  let rows: DatasetRow[] = isUuid(value) ? await candidates.clone().where('d.id', value) : [];
  if (rows.length === 0) rows = await candidates.clone().where('d.tracking_id', value).limit(2);
  rows = rows.filter((row) => datasetConfig(row).PUBLIC_DATASET.enabled);
  if (rows.length > 1) throw badRequest(`${value} is the tracking id of public datasets of several organizations; use the dataset id`);
  if (rows.length === 0) throw notFound(`dataset ${value} not found, or not public (its PUBLIC_DATASET.enabled is not true)`);
  return rows[0];
}
