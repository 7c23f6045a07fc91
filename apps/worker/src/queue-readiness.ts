import { type AppConfig } from '@app/config';
import { type JobQueue, queueBackendReadiness } from '@app/jobs';
import type { ReadinessChecks } from '@app/platform';
import { missingSchedules } from './maintenance/maintenance-schedule.service';

/**
 * The worker's readiness adds the queue backend's state, each queue's job counts, so operators see backlog and failures at a glance, and
 * fails while a repeatable job's schedule is missing from the queue backend (the worker puts it back within seconds).
 */
export function queueReadinessChecks(jobs: JobQueue, config: AppConfig): ReadinessChecks {
  return {
    ...queueBackendReadiness(jobs),
    queues: async () => {
      const entries = await Promise.all(
        jobs
          .allQueues()
          .map(
            async (queue) => [queue.name, await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')] as const,
          ),
      );
      return { queues: Object.fromEntries(entries) };
    },
    schedules: async () => {
      const missing = await missingSchedules(jobs, config);
      if (missing.length > 0) throw new Error(`missing job schedules: ${missing.join(', ')}`);
    },
  };
}
