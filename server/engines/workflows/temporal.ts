// The Temporal engine: a Client to start workflows and a Worker inside the service process
// (started by start()) that runs them, with Temporal's retries, timeouts and history.
import {
  Client,
  Connection,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError as TemporalWorkflowFailedError,
} from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Config } from '../../config.js';
import type { ActivityDeps } from '../../../workflows/activities/index.js';
import { flows } from '../../../workflows/registry.js';
import { createWorker, installTemporalRuntime } from '../../../workflows/worker.js';
import type * as temporalWorkflows from '../../../workflows/workflows.js';
import {
  WorkflowAlreadyRunningError,
  WorkflowFailedError,
  WorkflowInterruptedError,
  type WorkflowEngine,
  type WorkflowHandle,
  type WorkflowInput,
  type WorkflowLogger,
  type WorkflowName,
  type WorkflowOutput,
  type WorkflowSchedule,
  type WorkflowStart,
} from './types.js';

// Fails to compile when a registry workflow has no Temporal wrapper in workflows.ts (or a wrong one).
type Wrappers = { [N in WorkflowName]: (input: WorkflowInput<N>) => Promise<WorkflowOutput<N>> };
type Checked<T extends Wrappers> = T;
export type TemporalWorkflows = Checked<typeof temporalWorkflows>;

export interface TemporalOptions {
  /** How long running activities get to finish at close(); 10s by default. */
  shutdownGraceMs?: number;
  /** Gets the worker's warnings (failed activities...); Temporal's runtime is process-wide, so the first engine's wins. */
  logger?: WorkflowLogger;
}

type TemporalConfig = Extract<Config['workflows'], { kind: 'temporal' }>;

export async function createTemporalEngine(config: TemporalConfig, deps: ActivityDeps, options: TemporalOptions = {}): Promise<WorkflowEngine> {
  const { address, namespace, taskQueue } = config;
  installTemporalRuntime(options.logger);
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: 5000 });
  } catch (err) {
    throw new Error(`Temporal at ${address} does not answer: ${messageOf(err)}`);
  }
  const client = new Client({ connection, namespace });
  let worker: { native: NativeConnection; worker: Worker; running: Promise<void> } | undefined;
  let workerError: unknown;
  let closing: Promise<void> | undefined;

  const start = async () => {
    if (worker || closing) return;
    const native = await NativeConnection.connect({ address });
    try {
      const created = await createWorker({
        connection: native,
        namespace,
        taskQueue,
        deps,
        shutdownGraceMs: options.shutdownGraceMs,
      });
      // run() settles only when the worker stops; a crash is kept and reported by ping().
      const running = created.run().catch((err) => {
        workerError = err;
      });
      worker = { native, worker: created, running };
    } catch (err) {
      await native.close();
      throw new Error(`Temporal worker failed to start (task queue ${taskQueue}): ${messageOf(err)}`);
    }
  };

  const close = async () => {
    if (worker) {
      if (worker.worker.getState() === 'RUNNING') worker.worker.shutdown();
      await worker.running;
      await worker.native.close();
    }
    await connection.close();
  };

  return {
    kind: 'temporal',
    start,

    async ping() {
      try {
        await connection.withDeadline(Date.now() + 3000, () => connection.workflowService.describeNamespace({ namespace }));
      } catch (err) {
        throw new Error(`Temporal at ${address} (namespace ${namespace}) failed its health check: ${messageOf(err)}`);
      }
      if (workerError) throw new Error(`Temporal worker stopped: ${messageOf(workerError)}`);
    },

    // One count per workflow type: Temporal groups counts by execution status only.
    async open() {
      const names = Object.keys(flows) as WorkflowName[];
      const counts = await Promise.all(
        names.map((name) => client.workflow.count(`WorkflowType = '${name}' AND TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`)),
      );
      return Object.fromEntries(names.map((name, i) => [name, counts[i].count]));
    },

    async run<N extends WorkflowName>(name: N, start: WorkflowStart<WorkflowInput<N>>): Promise<WorkflowHandle<WorkflowOutput<N>>> {
      const { workflowId, input } = start;
      let handle;
      try {
        handle = await client.workflow.start(name, { taskQueue, workflowId, args: [input] });
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) throw new WorkflowAlreadyRunningError(workflowId);
        throw err;
      }
      return {
        workflowId,
        result: async () => {
          try {
            return (await handle.result()) as WorkflowOutput<N>;
          } catch (err) {
            if (err instanceof TemporalWorkflowFailedError) throw new WorkflowFailedError(workflowId, rootMessage(err));
            if (closing) throw new WorkflowInterruptedError(workflowId);
            throw err;
          }
        },
      };
    },

    // A Temporal Schedule (listed under Schedules in the Temporal UI), its intervals counted from now.
    async schedule<N extends WorkflowName>(name: N, schedule: WorkflowSchedule<WorkflowInput<N>>): Promise<Date> {
      const { scheduleId, workflowId, input, everyMs, keepIfSame } = schedule;
      if (keepIfSame) {
        const next = await sameScheduleNext(scheduleId, { name, workflowId, everyMs });
        if (next) return next;
      }
      await unschedule(scheduleId);
      const now = Date.now();
      const handle = await client.schedule.create({
        scheduleId,
        spec: { intervals: [{ every: everyMs, offset: now % everyMs }] },
        action: { type: 'startWorkflow', workflowType: name, workflowId, taskQueue, args: [input] },
        // Runs missed while the server was down are made up by one, however long ago (Temporal takes at least a minute).
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(everyMs, 60_000) },
      });
      return (await handle.describe()).info.nextActionTimes[0] ?? new Date(now + everyMs);
    },

    unschedule,

    close: () => (closing ??= close()),
  };

  /** The next run of the schedule when it starts this workflow under this id this often (input aside); else null. */
  async function sameScheduleNext(scheduleId: string, want: { name: string; workflowId: string; everyMs: number }): Promise<Date | null> {
    let description;
    try {
      description = await client.schedule.getHandle(scheduleId).describe();
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return null;
      throw err;
    }
    const { action, spec, info } = description;
    const interval = spec.intervals?.length === 1 ? spec.intervals[0].every : null;
    // Temporal keeps intervals to the second.
    const same =
      action.type === 'startWorkflow' &&
      action.workflowType === want.name &&
      action.workflowId === want.workflowId &&
      action.taskQueue === taskQueue &&
      interval === Math.round(want.everyMs / 1000) * 1000;
    return same ? (info.nextActionTimes[0] ?? null) : null;
  }

  async function unschedule(scheduleId: string): Promise<void> {
    try {
      await client.schedule.getHandle(scheduleId).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
}

/** The innermost cause's message: Temporal wraps an activity's error in ActivityFailure etc. */
function rootMessage(err: Error): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return messageOf(e);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
