import type { HealthCheckHandler } from '../../generated/handlers.js';
import { unavailable } from '../errors.js';
import { engineProbes, probeEngines } from '../health.js';

export const health_check: HealthCheckHandler = async ({ services }) => {
  const probes = engineProbes(services);
  const results = await probeEngines(probes);
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed >= 0) {
    const reason = (results[failed] as PromiseRejectedResult).reason;
    throw unavailable(`${probes[failed].name} does not answer: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
  const { store, lexical, workflows, defaultEmbedder } = services;
  return { status: 200, body: { store: store.kind, lexical: lexical.kind, workflows: workflows.kind, embedder: defaultEmbedder } };
};
