import { JobQueue } from '@app/jobs';
import type { ReadinessChecks } from '@app/platform';

/** The worker's readiness adds each queue's job counts, so operators see backlog and failures at a glance. */
export function queueReadinessChecks(jobs: JobQueue): ReadinessChecks {
  return {
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
  };
}
