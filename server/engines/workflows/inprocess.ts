// The in-process workflow runner (embedded default): the same flows and activities as under
// Temporal, run inside the service. Jobs live in Postgres; every completed activity call is
// journaled in job_steps under its sequence number, so after a restart a job's flow is replayed
// from the start and finished steps hand back their recorded results instead of running again.
// Several runners (services without Temporal) may share one database: a runner claims a job with a
// lease (jobs.owner, jobs.lease_expires_at: one conditional UPDATE, so exactly one claim wins) and
// renews it while it runs the job. Every runner looks for jobs to take every few seconds: new ones,
// and those whose owner's lease ran out (the owner died) or whose owner is a dead process on this
// host (a restart takes its jobs back at once). A runner that stops releases the jobs it interrupted.
import { msToNumber, type RetryPolicy } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import os from 'node:os';
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
  type WorkflowSchedule,
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
  /** How long a claimed job stays this runner's without renewal (renewed every third of it); 30s by default. */
  leaseMs?: number;
  /** How often the runner looks for jobs to take (new, or left by a dead owner); 5s by default. */
  pollMs?: number;
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
/** Thrown into a flow whose runner lost its lease (another runner took the job over). */
class LeaseLost extends Error {}

/** Where process ids mean the same: this host and PID namespace (containers sharing a hostname differ). */
const HOST = (() => {
  let namespace = '';
  try {
    namespace = readlinkSync('/proc/self/ns/pid').replace(/\D/g, '');
  } catch {
    // not Linux: the host name alone
  }
  return `${os.hostname()}${namespace ? `/${namespace}` : ''}`;
})();
/** Owners of the runners open in this process, which share its pid. */
const liveOwners = new Set<string>();

/** True when `owner` is a runner of this host whose process is gone (or a former life of this pid). */
function ownerIsDead(owner: string): boolean {
  const parts = owner.split(':');
  const pid = Number(parts.at(-2));
  if (parts.slice(0, -2).join(':') !== HOST || !Number.isInteger(pid)) return false;
  if (pid === process.pid) return !liveOwners.has(owner);
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM'; // EPERM: it exists, under another user
  }
}

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
  /** This runner, as jobs.owner names it. */
  private readonly owner = `${HOST}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly leaseMs: number;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Executions under way, by job id. */
  private readonly active = new Map<string, Promise<void>>();
  /** Jobs this runner has claimed and runs; their leases are renewed. */
  private readonly held = new Set<string>();
  /** Held jobs whose lease another runner took: their flows stop at the next activity call. */
  private readonly lost = new Set<string>();
  /** Result promises of jobs started by run(), settled when their execution ends. */
  private readonly waiters = new Map<string, Deferred>();

  constructor(
    deps: ActivityDeps,
    private readonly options: InProcessOptions,
  ) {
    this.db = deps.store.db;
    this.activities = createActivities(deps) as unknown as Record<string, AnyActivity>;
    this.leaseMs = options.leaseMs ?? 30_000;
    liveOwners.add(this.owner);
  }

  async start(): Promise<void> {
    if (this.started || this.closing) return;
    this.started = true;
    await this.takeAvailable();
    const every = (ms: number, task: () => Promise<void>) => {
      let running = false; // a slow query does not pile up ticks
      const tick = () => {
        if (running) return;
        running = true;
        task()
          .catch((err) => this.closing || this.options.logger?.warn({ err }, 'in-process runner: a job lease query failed'))
          .finally(() => (running = false));
      };
      this.timers.push(setInterval(tick, ms).unref());
    };
    every(this.options.pollMs ?? 5000, async () => {
      await this.fireDueSchedules();
      await this.takeAvailable();
    });
    every(this.leaseMs / 3, () => this.renewLeases());
  }

  async schedule<N extends WorkflowName>(name: N, schedule: WorkflowSchedule<WorkflowInput<N>>): Promise<Date> {
    if (!Object.hasOwn(flows, name)) throw new Error(`unknown workflow ${String(name)}`);
    const { scheduleId, workflowId, input, everyMs, keepIfSame } = schedule;
    const upsert = this.db('workflow_schedules')
      .insert({
        id: scheduleId,
        workflow: name,
        workflow_id: workflowId,
        input: JSON.stringify(input ?? null),
        every_ms: everyMs,
        next_run_at: this.db.raw(`now() + ? * interval '1 millisecond'`, [everyMs]),
      })
      .onConflict('id')
      .merge();
    if (keepIfSame) {
      upsert.whereRaw(
        '(workflow_schedules.workflow, workflow_schedules.workflow_id, workflow_schedules.input, workflow_schedules.every_ms) is distinct from (excluded.workflow, excluded.workflow_id, excluded.input, excluded.every_ms)',
      );
    }
    const [row] = await upsert.returning('next_run_at');
    if (row) return new Date(row.next_run_at);
    const kept = await this.db('workflow_schedules').where({ id: scheduleId }).first('next_run_at');
    return new Date(kept.next_run_at);
  }

  async unschedule(scheduleId: string): Promise<void> {
    await this.db('workflow_schedules').where({ id: scheduleId }).delete();
  }

  /**
   * Starts the scheduled workflows that are due, each once however many runs were missed, and
   * moves them on a period from now. One conditional UPDATE, so of several runners one fires each.
   */
  private async fireDueSchedules(): Promise<void> {
    if (this.closing) return;
    const { rows } = await this.db.raw(
      `update workflow_schedules set next_run_at = now() + every_ms * interval '1 millisecond'
       where next_run_at <= now() returning workflow, workflow_id, input`,
    );
    for (const due of rows as { workflow: WorkflowName; workflow_id: string; input: unknown }[]) {
      try {
        await this.run(due.workflow, { workflowId: due.workflow_id, input: due.input as never });
      } catch (err) {
        // The run before still goes: this one is skipped, as under Temporal.
        if (!(err instanceof WorkflowAlreadyRunningError)) throw err;
      }
    }
  }

  /** Launches the jobs no live runner holds: unowned, lease run out, or owned by a dead process here. */
  private async takeAvailable(): Promise<void> {
    if (this.closing) return;
    const candidates: { id: string; owner: string | null; free: boolean }[] = await this.db('jobs')
      .whereIn('status', ['pending', 'running'])
      .andWhere((q) =>
        q
          .whereNull('lease_expires_at')
          .orWhere('lease_expires_at', '<', this.db.fn.now())
          .orWhere('owner', 'like', `${HOST.replace(/[\\%_]/g, '\\$&')}:%`),
      )
      .orderBy('created_at')
      .select('id', 'owner', this.db.raw('(lease_expires_at is null or lease_expires_at < now()) as free'));
    for (const { id, owner, free } of candidates) {
      if (this.active.has(id) || this.closing) continue;
      if (free) this.launch(id, null);
      else if (owner && ownerIsDead(owner)) this.launch(id, owner);
    }
  }

  /** Extends the leases of the jobs this runner holds; one no longer this runner's is marked lost. */
  private async renewLeases(): Promise<void> {
    const held = [...this.held];
    if (held.length === 0) return;
    const renewed: { id: string }[] = await this.db('jobs')
      .whereIn('id', held)
      .andWhere('owner', this.owner)
      .whereIn('status', ['pending', 'running'])
      .update({ lease_expires_at: this.leaseEnd() })
      .returning('id');
    const still = new Set(renewed.map((r) => r.id));
    for (const id of held) if (!still.has(id) && this.held.has(id)) this.lost.add(id);
  }

  private leaseEnd() {
    return this.db.raw(`now() + ? * interval '1 millisecond'`, [this.leaseMs]);
  }

  /**
   * Claims the job for this runner, atomically: it must be unfinished and unowned, its lease run
   * out, already this runner's, or held by `deadOwner` (seen dead). Answers the job, or null.
   */
  private async claim(id: string, deadOwner: string | null): Promise<{ workflow: string; input: unknown } | null> {
    const { rows } = await this.db.raw(
      `update jobs set owner = ?, lease_expires_at = now() + ? * interval '1 millisecond', status = 'running', attempts = attempts + 1, updated_at = now()
       where id = ? and status in ('pending', 'running')
         and (lease_expires_at is null or lease_expires_at < now() or owner = ? or owner = ?)
       returning workflow, input`,
      [this.owner, this.leaseMs, id, this.owner, deadOwner],
    );
    return rows[0] ?? null;
  }

  async ping(): Promise<void> {
    try {
      await this.db('jobs').select('id').limit(1);
    } catch (err) {
      throw new Error(`in-process workflow runner: jobs table unavailable: ${messageOf(err)}`);
    }
  }

  async open(): Promise<Partial<Record<WorkflowName, number>>> {
    const rows: { workflow: string; n: string | number }[] = await this.db('jobs')
      .whereIn('status', ['pending', 'running'])
      .groupBy('workflow')
      .select('workflow', this.db.raw('count(*) as n'));
    return Object.fromEntries(rows.map((r) => [r.workflow, Number(r.n)]));
  }

  async run<N extends WorkflowName>(name: N, start: WorkflowStart<WorkflowInput<N>>): Promise<WorkflowHandle<WorkflowOutput<N>>> {
    const { workflowId, input } = start;
    if (this.closing) throw new Error(`in-process workflow runner is closing; cannot start ${workflowId}`);
    if (!Object.hasOwn(flows, name)) throw new Error(`unknown workflow ${String(name)}`);
    await this.db.transaction(async (trx) => {
      // Atomic claim: a new id, or one whose previous run has ended, becomes a fresh pending job.
      // A started runner holds it from the start; otherwise the first runner to look takes it.
      const owner = this.started && !this.closing ? this.owner : null;
      const claimed = await trx.raw(
        `insert into jobs (id, workflow, input, status, owner, lease_expires_at)
           values (?, ?, ?::jsonb, 'pending', ?::text, case when ?::text is null then null else now() + ? * interval '1 millisecond' end)
         on conflict (id) do update set workflow = excluded.workflow, input = excluded.input, status = 'pending',
           result = null, error = null, attempts = 0, owner = excluded.owner, lease_expires_at = excluded.lease_expires_at,
           created_at = now(), updated_at = now()
         where jobs.status in ('completed', 'failed')
         returning id`,
        [workflowId, name, JSON.stringify(input ?? null), owner, owner, this.leaseMs],
      );
      if (claimed.rows.length === 0) throw new WorkflowAlreadyRunningError(workflowId);
      await trx('job_steps').where('job_id', workflowId).del();
    });
    const waiter = deferred();
    this.waiters.set(workflowId, waiter);
    // Closed while claiming: the job stays pending and runs at the next start.
    if (this.closing) waiter.reject(new WorkflowInterruptedError(workflowId));
    else if (this.started) this.launch(workflowId, null);
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
    await Promise.race([Promise.allSettled([...this.active.values()]), new Promise((resolve) => (timer = setTimeout(resolve, grace)))]);
    clearTimeout(timer);
    // Jobs still running past the grace keep their lease until it runs out, then go to another runner.
    for (const t of this.timers) clearInterval(t);
    liveOwners.delete(this.owner);
    // Jobs run() accepted but never started (start() was not called) resume at the next start too.
    for (const [id, waiter] of this.waiters) waiter.reject(new WorkflowInterruptedError(id));
    this.waiters.clear();
  }

  private launch(id: string, deadOwner: string | null): void {
    // A new run of an id whose previous execution is still winding down waits for it.
    const previous = this.active.get(id) ?? Promise.resolve();
    const execution: Promise<void> = previous
      .then(() => this.execute(id, deadOwner))
      .finally(() => {
        if (this.active.get(id) === execution) this.active.delete(id);
      });
    this.active.set(id, execution);
  }

  /** Claims one job, runs (or replays) its flow to its end, records the outcome and settles its waiter. */
  private async execute(id: string, deadOwner: string | null): Promise<void> {
    const waiter = this.waiters.get(id);
    const settle = (fn: (d: Deferred) => void) => {
      if (waiter) fn(waiter);
      if (this.waiters.get(id) === waiter) this.waiters.delete(id);
    };
    // The outcome is written only while the job is still this runner's.
    const mine = () => this.db('jobs').where({ id, owner: this.owner });
    let claimed = false;
    try {
      const job = await this.claim(id, deadOwner);
      if (!job) return void (waiter && this.follow(id, settle)); // another runner has it
      claimed = true;
      this.held.add(id);
      const flow = (flows as Record<string, AnyFlow>)[job.workflow];
      if (!flow) throw new Error(`unknown workflow ${job.workflow}`);
      const steps: StepRow[] = await this.db('job_steps').where('job_id', id).orderBy('seq').select('seq', 'activity', 'result');
      const output = jsonClone(await flow({ activities: this.journaled(id, steps) as unknown as Activities }, job.input));
      const done = await mine().update({ status: 'completed', result: JSON.stringify(output ?? null), lease_expires_at: null, updated_at: this.db.fn.now() });
      if (done === 0) throw new LeaseLost();
      settle((d) => d.resolve(output));
    } catch (err) {
      if (err instanceof LeaseLost) {
        this.options.logger?.warn({ workflowId: id }, 'another runner took over the job (this runner’s lease ran out)');
        if (waiter) this.follow(id, settle);
        return;
      }
      if (err instanceof Interrupted || this.stop.signal.aborted) {
        // Released, so that another runner carries on at once.
        if (claimed)
          await mine()
            .whereIn('status', ['pending', 'running'])
            .update({ owner: null, lease_expires_at: null })
            .catch(() => {});
        settle((d) => d.reject(new WorkflowInterruptedError(id)));
        return;
      }
      const reason = messageOf(err);
      this.options.logger?.error({ workflowId: id, err }, 'workflow failed');
      await mine()
        .update({ status: 'failed', error: reason, lease_expires_at: null, updated_at: this.db.fn.now() })
        .catch(() => {}); // the store itself failing: the job stays unfinished, and is taken again once its lease runs out
      settle((d) => d.reject(new WorkflowFailedError(id, reason)));
    } finally {
      this.held.delete(id);
      this.lost.delete(id);
    }
  }

  /** Settles a waiter from the job's row, for a job another runner finishes. */
  private async follow(id: string, settle: (fn: (d: Deferred) => void) => void): Promise<void> {
    try {
      for (;;) {
        const job = await this.db('jobs').where('id', id).first('status', 'result', 'error');
        if (job?.status === 'completed') return settle((d) => d.resolve(job.result));
        if (job?.status === 'failed') return settle((d) => d.reject(new WorkflowFailedError(id, job.error)));
        await sleep(this.options.pollMs ?? 5000, this.stop.signal);
      }
    } catch {
      settle((d) => d.reject(new WorkflowInterruptedError(id)));
    }
  }

  /** The job's activities, each call numbered in call order and answered from the journal when recorded. */
  private journaled(jobId: string, steps: StepRow[]): Record<string, AnyActivity> {
    const journal = new Map(steps.map((s) => [s.seq, s]));
    let seq = 0;
    const wrap =
      (name: string, activity: AnyActivity): AnyActivity =>
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
        // Journaled only while the job is still this runner's: one that lost it stops here, so it
        // runs at most the activity that was under way (as under Temporal, at least once).
        const { rows } = await this.db.raw(
          `insert into job_steps (job_id, seq, activity, result, attempts)
           select ?, ?, ?, ?::jsonb, ? where exists (select 1 from jobs where id = ? and owner = ?)
           on conflict (job_id, seq) do nothing returning seq`,
          [jobId, n, name, JSON.stringify(result), attempts, jobId, this.owner],
        );
        if (rows.length === 0 && !(await this.db('jobs').where({ id: jobId, owner: this.owner }).first('id'))) throw new LeaseLost();
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
      if (this.lost.has(jobId)) throw new LeaseLost();
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
  const promise = new Promise<unknown>((res, rej) => {
    resolve = res;
    reject = rej;
  });
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
