// The Temporal worker that runs inside the service process, so activities close over the live
// store and index. Workflow code is bundled once per process (webpack, a few seconds) and reused.
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type NativeConnection } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import type { WorkflowLogger } from '../server/engines/workflows/types.js';
import { createActivities, type ActivityDeps } from './activities/index.js';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** How long running activities get to finish at shutdown before they are cancelled; 10s by default. */
  shutdownGraceMs?: number;
}

const workflowsPath = fileURLToPath(new URL('./workflows.ts', import.meta.url));
let bundle: ReturnType<typeof bundleWorkflowCode> | undefined;

/** Bundles workflows.ts once per process; a failed bundle is retried at the next call. */
function workflowBundle() {
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: quietLogger }).catch((err) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities(options.deps),
    shutdownGraceTime: options.shutdownGraceMs ?? 10_000,
    // Then a few seconds for cancelled activities to stop; one that ignores cancellation must not
    // keep the service from exiting (worker.run() rejects instead).
    shutdownForceTime: (options.shutdownGraceMs ?? 10_000) + 5_000,
  });
}

const quietLogger = new DefaultLogger('WARN');

/**
 * Configures Temporal's process-wide runtime before the first connection: warnings and errors
 * only, to the given logger, and no signal handlers of its own (the service decides when to shut
 * down). The runtime shuts itself down when its last worker and connection close, so this runs
 * before each new connection; while one is live it refuses, which is fine.
 */
export function installTemporalRuntime(logger?: WorkflowLogger): void {
  const forward = logger
    ? new DefaultLogger('WARN', ({ level, message, meta }) => (level === 'ERROR' ? logger.error({ ...meta }, message) : logger.warn({ ...meta }, message)))
    : quietLogger;
  try {
    Runtime.install({ logger: forward, shutdownSignals: [] });
  } catch {
    // already installed and in use
  }
}
