// The in-process workflow runner (embedded default): the same flows and activities as under
// Temporal, run inside the service. Jobs live in Postgres; every completed activity call is
// journaled in job_steps under its sequence number, so after a restart a job's flow is replayed
// from the start and finished steps hand back their recorded results instead of running again.
// Assumes one runner per database (it resumes every unfinished job at start).
import { msToNumber, type RetryPolicy } from '@temporalio/common';
import { createActivities, type ActivityDeps, type Activities } from '../../../workflows/activities/index.js';
import { activityOptions, type FlowContext } from '../../../workflows/flows.js';
import { flows } from '../../../workflows/registry.js';
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
  type WorkflowStart,
} from './types.js';

export interface StepEvent {
  jobId: string;
  seq: number;
  activity: string;
  attempts: number;
}

export interface InProcessOptions {
  /** How long close() waits for running activities before giving up on them; 10s by default. */
  shutdownGraceMs?: number;
  /** Gets activity retries and workflow failures. */
  logger?: WorkflowLogger;
  /** Called after each activity call is executed and journaled (not for replayed ones). */
  onStep?: (event: StepEvent) => void;
}

type AnyActivity = (...args: unknown[]) => Promise<unknown>;
type AnyFlow = (ctx: FlowContext<Activities>, input: unknown) => Promise<unknown>;
interface StepRow {
  seq: number;
  activity: string;
  result: { value?: unknown };
}

/** Thrown into a flow whose runner is closing; the job stays `running` and resumes at next start. */
class Interrupted extends Error {}

export function createInProcessEngine(deps: ActivityDeps, options: InProcessOptions = {}): WorkflowEngine {
  return new InProcessEngine(deps, options);
}

class InProcessEngine implements WorkflowEngine {
  readonly kind = 'in-process' as const;
  private readonly db;
  private readonly activities: Record<string, AnyActivity>;
  private started = false;
  private closing: Promise<void> | null = null;
  private readonly stop = new AbortController();
  /** Executions under way, by job id. */
  private readonly active = new Map<string, Promise<void>>();
  /** Result promises of jobs started by run(), settled when their execution ends. */
  private readonly waiters = new Map<string, Deferred>();

  constructor(
    deps: ActivityDeps,
    private readonly options: InProcessOptions,
  ) {
    this.db = deps.store.db;
    this.activities = createActivities(deps) as unknown as Record<string, AnyActivity>;
  }

  async start(): Promise<void> {
    if (this.started || this.closing) return;
    this.started = true;
    const unfinished: { id: string }[] = await this.db('jobs').whereIn('status', ['pending', 'running']).orderBy('created_at').select('id');
    for (const { id } of unfinished) this.launch(id);
  }

  async ping(): Promise<void> {
    try {
      await this.db('jobs').select('id').limit(1);
    } catch (err) {
      throw new Error(`in-process workflow runner: jobs table unavailable: ${messageOf(err)}`);
    }
  }

  async run<N extends WorkflowName>(name: N, start: WorkflowStart<WorkflowInput<N>>): Promise<WorkflowHandle<WorkflowOutput<N>>> {
    const { workflowId, input } = start;
    if (this.closing) throw new Error(`in-process workflow runner is closing; cannot start ${workflowId}`);
    if (!Object.hasOwn(flows, name)) throw new Error(`unknown workflow ${String(name)}`);
    await this.db.transaction(async (trx) => {
      // Atomic claim: a new id, or one whose previous run has ended, becomes a fresh pending job.
      const claimed = await trx.raw(
        `insert into jobs (id, workflow, input, status) values (?, ?, ?::jsonb, 'pending')
         on conflict (id) do update set workflow = excluded.workflow, input = excluded.input, status = 'pending',
           result = null, error = null, attempts = 0, created_at = now(), updated_at = now()
         where jobs.status in ('completed', 'failed')
         returning id`,
        [workflowId, name, JSON.stringify(input ?? null)],
      );
      if (claimed.rows.length === 0) throw new WorkflowAlreadyRunningError(workflowId);
      await trx('job_steps').where('job_id', workflowId).del();
    });
    const waiter = deferred();
    this.waiters.set(workflowId, waiter);
    // Closed while claiming: the job stays pending and runs at the next start.
    if (this.closing) waiter.reject(new WorkflowInterruptedError(workflowId));
    else if (this.started) this.launch(workflowId);
    return { workflowId, result: () => waiter.promise as Promise<WorkflowOutput<N>> };
  }

  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stop.abort();
    const grace = this.options.shutdownGraceMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.active.values()]),
      new Promise((resolve) => (timer = setTimeout(resolve, grace))),
    ]);
    clearTimeout(timer);
    // Jobs run() accepted but never started (start() was not called) resume at the next start too.
    for (const [id, waiter] of this.waiters) waiter.reject(new WorkflowInterruptedError(id));
    this.waiters.clear();
  }

  private launch(id: string): void {
    // A new run of an id whose previous execution is still winding down waits for it.
    const previous = this.active.get(id) ?? Promise.resolve();
    const execution: Promise<void> = previous
      .then(() => this.execute(id))
      .finally(() => {
        if (this.active.get(id) === execution) this.active.delete(id);
      });
    this.active.set(id, execution);
  }

  /** Runs (or replays) one job's flow to its end, records the outcome and settles its waiter. */
  private async execute(id: string): Promise<void> {
    const waiter = this.waiters.get(id);
    const settle = (fn: (d: Deferred) => void) => {
      if (waiter) fn(waiter);
      if (this.waiters.get(id) === waiter) this.waiters.delete(id);
    };
    try {
      const job = await this.db('jobs').where('id', id).first();
      const flow = (flows as Record<string, AnyFlow>)[job.workflow];
      if (!flow) throw new Error(`unknown workflow ${job.workflow}`);
      await this.db('jobs')
        .where('id', id)
        .update({ status: 'running', attempts: this.db.raw('attempts + 1'), updated_at: this.db.fn.now() });
      const steps: StepRow[] = await this.db('job_steps').where('job_id', id).orderBy('seq').select('seq', 'activity', 'result');
      const output = jsonClone(await flow({ activities: this.journaled(id, steps) as unknown as Activities }, job.input));
      await this.db('jobs')
        .where('id', id)
        .update({ status: 'completed', result: JSON.stringify(output ?? null), updated_at: this.db.fn.now() });
      settle((d) => d.resolve(output));
    } catch (err) {
      if (err instanceof Interrupted || this.stop.signal.aborted) {
        settle((d) => d.reject(new WorkflowInterruptedError(id)));
        return;
      }
      const reason = messageOf(err);
      this.options.logger?.error({ workflowId: id, err }, 'workflow failed');
      await this.db('jobs')
        .where('id', id)
        .update({ status: 'failed', error: reason, updated_at: this.db.fn.now() })
        .catch(() => {}); // the store itself failing: the job stays unfinished and resumes later
      settle((d) => d.reject(new WorkflowFailedError(id, reason)));
    }
  }

  /** The job's activities, each call numbered in call order and answered from the journal when recorded. */
  private journaled(jobId: string, steps: StepRow[]): Record<string, AnyActivity> {
    const journal = new Map(steps.map((s) => [s.seq, s]));
    let seq = 0;
    const wrap = (name: string, activity: AnyActivity): AnyActivity =>
      async (...args) => {
        const n = ++seq; // taken before any await, so concurrent calls number deterministically
        const recorded = journal.get(n);
        if (recorded) {
          if (recorded.activity !== name) {
            throw new Error(`job ${jobId} cannot be replayed: step ${n} was ${recorded.activity}, the flow now calls ${name}`);
          }
          return recorded.result.value;
        }
        // Arguments and results cross a JSON boundary, as under Temporal, so a replay sees the same values.
        const { value, attempts } = await this.withRetry(jobId, name, () => activity(...jsonClone(args)));
        const result = jsonClone({ value });
        await this.db('job_steps')
          .insert({ job_id: jobId, seq: n, activity: name, result: JSON.stringify(result), attempts })
          .onConflict(['job_id', 'seq'])
          .ignore();
        this.options.onStep?.({ jobId, seq: n, activity: name, attempts });
        return result.value;
      };
    return Object.fromEntries(Object.entries(this.activities).map(([name, fn]) => [name, wrap(name, fn)]));
  }

  /** Calls an activity with the retry policy of its Temporal options (exponential back-off). */
  private async withRetry(jobId: string, name: string, call: () => Promise<unknown>): Promise<{ value: unknown; attempts: number }> {
    const policy: RetryPolicy = (activityOptions as Record<string, { retry?: RetryPolicy }>)[name]?.retry ?? {};
    const initial = policy.initialInterval === undefined ? 1000 : msToNumber(policy.initialInterval);
    const coefficient = policy.backoffCoefficient ?? 2;
    const maxInterval = policy.maximumInterval === undefined ? initial * 100 : msToNumber(policy.maximumInterval);
    const maxAttempts = policy.maximumAttempts || Infinity; // 0 or unset means unlimited, as in Temporal
    for (let attempt = 1; ; attempt++) {
      if (this.stop.signal.aborted) throw new Interrupted();
      try {
        return { value: await call(), attempts: attempt };
      } catch (err) {
        if (attempt >= maxAttempts || isNonRetryable(err, policy)) throw err;
        const delayMs = Math.min(initial * coefficient ** (attempt - 1), maxInterval);
        this.options.logger?.warn({ workflowId: jobId, activity: name, attempt, delayMs, err }, 'activity failed; retrying');
        await sleep(delayMs, this.stop.signal);
      }
    }
  }
}

function isNonRetryable(err: unknown, policy: RetryPolicy): boolean {
  const e = err as { nonRetryable?: boolean; type?: string; name?: string } | null;
  if (e?.nonRetryable === true) return true; // Temporal's ApplicationFailure.nonRetryable(...)
  const type = e?.type ?? e?.name;
  return !!type && (policy.nonRetryableErrorTypes ?? []).includes(type);
}

interface Deferred {
  promise: Promise<unknown>;
  resolve(value: unknown): void;
  reject(reason: Error): void;
}

function deferred(): Deferred {
  let resolve!: (value: unknown) => void;
  let reject!: (reason: Error) => void;
  const promise = new Promise<unknown>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => {}); // nobody may ever ask for the result; that is not an unhandled rejection
  return { promise, resolve, reject };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Interrupted());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Interrupted());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function jsonClone<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
