// Datasets as the rest of the service sees them, and how a `SVC-Dataset` value names one.
import type { Knex } from 'knex';
import type { Caller } from '../auth/caller.js';
import { badRequest, notFound } from '../errors.js';
import { isUuid } from './ids.js';

export interface DatasetRow {
  id: string;
  organization_id: string;
  name: string;
  tracking_id: string | null;
  server_configuration: Record<string, unknown>;
  client_configuration: Record<string, unknown>;
  deleted: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * Finds the dataset a `SVC-Dataset` header names: a valid uuid is taken as an id, anything else as a
 * tracking id within the caller's organization (the administrator's must be unambiguous).
 */
export async function resolveDataset(db: Knex, value: string, caller: Caller): Promise<DatasetRow> {
  const live = db<DatasetRow>('datasets').where({ deleted: 0 });
  if (isUuid(value)) {
    const row = await live.clone().where({ id: value }).first();
    if (row) return row;
  }
  const byTrackingId = live.clone().where({ tracking_id: value });
  if (caller.kind === 'key') byTrackingId.where({ organization_id: caller.organizationId });
  const rows = await byTrackingId.limit(2);
  if (rows.length > 1) throw badRequest(`SVC-Dataset ${value} names datasets of several organizations; use the dataset id`);
  if (rows.length === 0) throw notFound(`dataset ${value} not found`);
  return rows[0];
}
