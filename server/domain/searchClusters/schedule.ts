// The schedule of search clustering: the searchClusters workflow over every dataset searched
// lately, every ANALYTICS_CLUSTER_INTERVAL (none when it is `off`). Set at each start of the
// service; a schedule already set with the same interval keeps its next run.
import type { WorkflowEngine } from '../../engines/workflows/index.js';
import { workflowIds } from '../../../workflows/registry.js';

/** One schedule per deployment: under Temporal, per task queue (its schedules are the namespace's). */
export function searchClustersScheduleId(taskQueue: string | null): string {
  return taskQueue ? `search-clusters-schedule-${taskQueue}` : 'search-clusters-schedule';
}

export async function scheduleSearchClusters(workflows: WorkflowEngine, everyMs: number | null, taskQueue: string | null): Promise<void> {
  const scheduleId = searchClustersScheduleId(taskQueue);
  if (everyMs === null) {
    await workflows.unschedule(scheduleId);
    return;
  }
  await workflows.schedule('searchClusters', { scheduleId, workflowId: workflowIds.searchClusters(), input: {}, everyMs, keepIfSame: true });
}
