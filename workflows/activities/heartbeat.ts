// Tells Temporal a long activity is alive (so a dead worker's attempt is retried after the
// heartbeat timeout, not the whole start-to-close timeout); nothing under the in-process runner.
import { Context } from '@temporalio/activity';

export function heartbeat(details?: unknown): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // not inside a Temporal activity
  }
  context.heartbeat(details);
}
