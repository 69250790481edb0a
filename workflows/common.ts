// Helpers shared by the flows; deterministic, no I/O (they run inside Temporal's workflow sandbox).
import type { RetryPolicy } from '@temporalio/workflow';

/** The default retry policy of activities: exponential back-off, five attempts. */
export const retry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 5 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function checkUuid(workflow: string, field: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || !UUID.test(value)) {
    throw new Error(`${workflow}: ${field} must be a UUID, got ${JSON.stringify(value)}`);
  }
}

export function checkBatchSize(workflow: string, batchSize: unknown): asserts batchSize is number {
  if (!Number.isInteger(batchSize) || (batchSize as number) < 1 || (batchSize as number) > 100_000) {
    throw new Error(`${workflow}: batchSize must be an integer from 1 to 100000, got ${JSON.stringify(batchSize)}`);
  }
}

/** The innermost message of an error: engines wrap an activity's error (ActivityFailure -> cause). */
export function reasonOf(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** A cancellation (the engine shutting down or the workflow cancelled) is no failure to report. */
export function isCancellation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e.name === 'CancelledFailure') return true;
  return false;
}
