// Picks the workflow engine once, at start, from the configuration.
import type { Config } from '../../config.js';
import type { ActivityDeps } from '../../../workflows/activities/index.js';
import { createInProcessEngine } from './inprocess.js';
import type { WorkflowEngine, WorkflowLogger } from './types.js';

export * from './types.js';

export interface WorkflowEngineOptions {
  /** How long close() lets running activities finish; 10s by default. */
  shutdownGraceMs?: number;
  /** Gets activity retries and workflow failures (a pino logger fits). */
  logger?: WorkflowLogger;
  /** The in-process runner: how often it looks for jobs to take and schedules due; 5s by default. */
  pollMs?: number;
}

export async function createWorkflowEngine(config: Config['workflows'], deps: ActivityDeps, options: WorkflowEngineOptions = {}): Promise<WorkflowEngine> {
  if (config.kind === 'temporal') {
    // Loaded lazily: the embedded mode never pays for gRPC and Temporal's native runtime.
    const { createTemporalEngine } = await import('./temporal.js');
    return createTemporalEngine(config, deps, options);
  }
  return createInProcessEngine(deps, options);
}
