import type { GetMetricsHandler, ScrapeMetricsHandler } from '../../generated/handlers.js';
import { TextStream } from '../context.js';
import { forbidden } from '../errors.js';
import { engineProbes, probeEngines } from '../health.js';
import { engineUp, metricsRegistry, workflowsOpen } from '../metrics.js';

export const get_metrics: GetMetricsHandler = async ({ services, caller }) => {
  if (caller.kind !== 'admin') throw forbidden('only the instance administrator may read the metrics');
  const probes = engineProbes(services);
  const [results, open] = await Promise.all([probeEngines(probes, 2000), services.workflows.open().catch(() => null)]);
  for (const [i, p] of probes.entries()) engineUp.set({ engine: p.engine, kind: p.kind }, results[i].status === 'fulfilled' ? 1 : 0);
  // Unknown when the workflow engine does not answer: the last figures are not repeated as current.
  workflowsOpen.reset();
  for (const [workflow, n] of Object.entries(open ?? {})) workflowsOpen.set({ workflow }, n);
  return { status: 200, body: TextStream.whole(await metricsRegistry.metrics(), metricsRegistry.contentType) };
};

export const scrape_metrics: ScrapeMetricsHandler = (context) => get_metrics(context);
