// Handlers of the Experiment operations; the rules are in domain/experiments/.
import type {
  AbTestHandler,
  CreateExperimentHandler,
  DeleteExperimentHandler,
  GetExperimentHandler,
  GetExperimentsHandler,
  UpdateExperimentHandler,
} from '../../generated/handlers.js';
import { abTest, createExperiment, deleteExperiment, getExperiment, listExperiments, updateExperiment } from '../domain/experiments/experiments.js';

export const get_experiments: GetExperimentsHandler = async ({ dataset, services }) => ({
  status: 200,
  body: await listExperiments(services.store.db, dataset.id),
});

export const create_experiment: CreateExperimentHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await createExperiment(services.store.db, dataset.id, body),
});

export const update_experiment: UpdateExperimentHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await updateExperiment(services.store.db, dataset.id, body),
});

export const get_experiment: GetExperimentHandler = async ({ path, dataset, services }) => ({
  status: 200,
  body: await getExperiment(services.store.db, dataset.id, path.experiment_id),
});

export const delete_experiment: DeleteExperimentHandler = async ({ path, dataset, services }) => {
  await deleteExperiment(services.store.db, dataset.id, path.experiment_id);
  return { status: 204, body: undefined };
};

export const ab_test: AbTestHandler = async ({ body, dataset, services }) => ({
  status: 200,
  body: await abTest(services.store.db, dataset.id, body),
});
