// A dataset's A/B experiments and the treatments their users were put in, read and written here.
// An experiment of another dataset is out of reach, exactly like one that does not exist.
import type { Knex } from 'knex';
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { notFound } from '../../errors.js';
import { timestamp } from '../../format.js';
import { assignTreatment } from './assignment.js';
import { checkConfig, nameOf } from './config.js';

export interface ExperimentRow {
  id: string;
  dataset_id: string;
  name: string;
  area: string;
  control_name: string;
  control_split: number;
  t1_name: string;
  t1_split: number;
  created_at: Date;
  updated_at: Date;
}

const CONFIG_FIELDS = ['area', 'control_name', 'control_split', 't1_name', 't1_split'] as const;

const experimentRecord = (row: ExperimentRow): T.Experiment => ({
  id: row.id,
  name: row.name,
  area: row.area,
  control_name: row.control_name,
  control_split: Number(row.control_split),
  t1_name: row.t1_name,
  t1_split: Number(row.t1_split),
  dataset_id: row.dataset_id,
  created_at: timestamp(row.created_at),
  updated_at: timestamp(row.updated_at),
});

const missing = (experimentId: string) => notFound(`experiment ${experimentId} not found in this dataset`);

async function findRow(db: Knex, datasetId: string, experimentId: string, lock?: 'share' | 'update'): Promise<ExperimentRow> {
  const query = db<ExperimentRow>('experiments').where({ id: experimentId, dataset_id: datasetId });
  if (lock === 'share') query.forShare();
  if (lock === 'update') query.forUpdate();
  const row = await query.first();
  if (!row) throw missing(experimentId);
  return row;
}

export async function createExperiment(db: Knex, datasetId: string, body: T.CreateExperimentReqBody): Promise<T.Experiment> {
  const name = nameOf('name', body.name);
  const config = checkConfig(body.experiment_config);
  const [row] = await db<ExperimentRow>('experiments')
    .insert({ dataset_id: datasetId, name, ...config })
    .returning('*');
  return experimentRecord(row);
}

/** The dataset's experiments, the oldest first. */
export async function listExperiments(db: Knex, datasetId: string): Promise<T.Experiment[]> {
  const rows = await db<ExperimentRow>('experiments')
    .where({ dataset_id: datasetId })
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ]);
  return rows.map(experimentRecord);
}

export async function getExperiment(db: Knex, datasetId: string, experimentId: string): Promise<T.Experiment> {
  return experimentRecord(await findRow(db, datasetId, experimentId));
}

/**
 * Changes the name and, when given, the whole configuration. A treatment renamed is renamed in the
 * recorded assignments in the same transaction (one statement, so two names swapped stay swapped);
 * assignments keep their treatment when the shares change.
 */
export async function updateExperiment(db: Knex, datasetId: string, body: T.UpdateExperimentReqBody): Promise<T.Experiment> {
  const name = body.name == null ? undefined : nameOf('name', body.name);
  const config = body.experiment_config == null ? undefined : checkConfig(body.experiment_config);
  return db.transaction(async (trx) => {
    const current = await findRow(trx, datasetId, body.id, 'update');
    const changes: Partial<ExperimentRow> = {};
    if (name !== undefined && name !== current.name) changes.name = name;
    for (const field of config ? CONFIG_FIELDS : []) {
      if (config![field] !== current[field]) Object.assign(changes, { [field]: config![field] });
    }
    if (Object.keys(changes).length === 0) return experimentRecord(current);
    const [row]: ExperimentRow[] = await trx('experiments')
      .where({ id: current.id })
      .update({ ...changes, updated_at: trx.fn.now() })
      .returning('*');
    if (row.control_name !== current.control_name || row.t1_name !== current.t1_name) {
      await trx.raw(
        `update experiment_user_assignments
         set treatment_name = case treatment_name when ? then ? when ? then ? else treatment_name end, updated_at = now()
         where experiment_id = ? and treatment_name in (?, ?)`,
        [current.control_name, row.control_name, current.t1_name, row.t1_name, current.id, current.control_name, current.t1_name],
      );
    }
    return experimentRecord(row);
  });
}

/** Deletes the experiment; its assignments go with it (the table cascades). */
export async function deleteExperiment(db: Knex, datasetId: string, experimentId: string): Promise<void> {
  const deleted = await db('experiments').where({ id: experimentId, dataset_id: datasetId }).delete();
  if (deleted === 0) throw missing(experimentId);
}

/** The treatment recorded for the user in the dataset's experiment, if any. */
async function recordedTreatment(db: Knex, datasetId: string, experimentId: string, userId: string): Promise<string | undefined> {
  const row = await db('experiment_user_assignments').where({ experiment_id: experimentId, user_id: userId, dataset_id: datasetId }).first('treatment_name');
  return row?.treatment_name;
}

/**
 * The user's treatment: the one recorded for the user, or else the one the ids choose, recorded now.
 * When choosing, the experiment row is share-locked, so a rename cannot slip between the choice and
 * the record; of two first requests for one user, the unique key lets one record and both answer it.
 */
export async function abTest(db: Knex, datasetId: string, body: T.AbTestReqBody): Promise<T.UserTreatmentResponse> {
  const answer = (treatment_name: string) => ({ treatment_name, experiment_id: body.experiment_id, user_id: body.user_id });
  const known = await recordedTreatment(db, datasetId, body.experiment_id, body.user_id);
  if (known !== undefined) return answer(known);
  return db.transaction(async (trx) => {
    const experiment = await findRow(trx, datasetId, body.experiment_id, 'share');
    await trx('experiment_user_assignments')
      .insert({
        experiment_id: experiment.id,
        dataset_id: datasetId,
        user_id: body.user_id,
        treatment_name: assignTreatment(experiment.id, body.user_id, experiment),
      })
      .onConflict(['experiment_id', 'user_id'])
      .ignore();
    return answer((await recordedTreatment(trx, datasetId, experiment.id, body.user_id))!);
  });
}
