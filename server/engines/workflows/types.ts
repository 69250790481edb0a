// The durable work seam: workflows made of activities, run by Temporal or by the in-process runner.

export interface WorkflowStart<I> {
  /** A readable, unique id (e.g. `ingest-file-<file id>`); starting a running id again is refused. */
  workflowId: string;
  input: I;
}

export interface WorkflowSchedule<I> {
  /** A readable, unique id (e.g. `crawl-schedule-<crawl id>`); scheduling an id again replaces it. */
  scheduleId: string;
  /** The id each run starts under (under Temporal, with the run's time appended). */
  workflowId: string;
  input: I;
  /** How often it runs, the first time this long after it is scheduled. */
  everyMs: number;
  /**
   * Keep a schedule of this id that already starts this workflow this often, its next run where it
   * was (a schedule set at every start of the service would otherwise never come due).
   */
  keepIfSame?: boolean;
}

export interface WorkflowHandle<O> {
  workflowId: string;
  /** Resolves with the workflow's result, rejects with its failure. */
  result(): Promise<O>;
}

export interface WorkflowEngine {
  readonly kind: 'in-process' | 'temporal';
  /** Starts the worker side (Temporal worker or in-process runner, resuming unfinished jobs). */
  start(): Promise<void>;
  /** Throws when the engine does not answer. */
  ping(): Promise<void>;
  /** Runs started and not finished, by workflow name (names with none may be left out). */
  open(): Promise<Partial<Record<WorkflowName, number>>>;
  run<N extends WorkflowName>(name: N, start: WorkflowStart<WorkflowInput<N>>): Promise<WorkflowHandle<WorkflowOutput<N>>>;
  /**
   * Runs the workflow on a schedule that outlives restarts, replacing one of the same id; a run is
   * not started while the one before still goes, and runs missed while nothing ran are made up by
   * one. Answers when it runs next.
   */
  schedule<N extends WorkflowName>(name: N, schedule: WorkflowSchedule<WorkflowInput<N>>): Promise<Date>;
  /** Removes a schedule; none of that id is no error. */
  unschedule(scheduleId: string): Promise<void>;
  close(): Promise<void>;
}

/** Where engines report retries and failures; a pino logger fits. */
export interface WorkflowLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Starting a workflow id that is still pending or running. */
export class WorkflowAlreadyRunningError extends Error {
  constructor(readonly workflowId: string) {
    super(`workflow ${workflowId} is already running`);
    this.name = 'WorkflowAlreadyRunningError';
  }
}

/** A workflow that failed for good; the message carries the underlying error's. */
export class WorkflowFailedError extends Error {
  constructor(
    readonly workflowId: string,
    readonly reason: string,
  ) {
    super(`workflow ${workflowId} failed: ${reason}`);
    this.name = 'WorkflowFailedError';
  }
}

/** The engine closed before the workflow finished; it carries on when a worker or runner starts again. */
export class WorkflowInterruptedError extends Error {
  constructor(readonly workflowId: string) {
    super(`workflow ${workflowId} was interrupted by shutdown; it resumes when the service starts again`);
    this.name = 'WorkflowInterruptedError';
  }
}

// Filled in by workflows/: the registry of workflow names with their input and output types.
import type { WorkflowRegistry } from '../../../workflows/registry.js';
export type WorkflowName = keyof WorkflowRegistry;
export type WorkflowInput<N extends WorkflowName> = Parameters<WorkflowRegistry[N]>[1];
export type WorkflowOutput<N extends WorkflowName> = Awaited<ReturnType<WorkflowRegistry[N]>>;
