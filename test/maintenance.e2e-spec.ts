import { JobQueue, Jobs, QueueBackend } from '@app/jobs';
import { createAccount } from './support/factories';
import { type Stack, startStack, testConfig } from './support/stack';
import { waitFor } from './support/wait-for';
import { createWorkerApp } from '../apps/worker/src/worker.app';

describe('Maintenance: purge expired sessions', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('is scheduled as a repeatable job by the worker', async () => {
    const queue = stack.api.get(JobQueue).queue(Jobs.purgeExpiredSessions.queue);
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((scheduler) => scheduler.key)).toContain(Jobs.purgeExpiredSessions.name);
  });

  it('deletes expired session tokens and keeps live ones, run by the real worker', async () => {
    const expired = await createAccount(stack);
    const live = await createAccount(stack);
    await stack.dataSource.query(
      `UPDATE session_tokens SET expires_at = now() - interval '1 minute' WHERE user_id = $1`,
      [expired.id],
    );

    const queue = stack.api.get(JobQueue).queue(Jobs.purgeExpiredSessions.queue);
    const events = stack.api.get(QueueBackend).createQueueEvents(queue.name);
    try {
      await events.waitUntilReady();
      const job = await stack.api.get(JobQueue).enqueue(Jobs.purgeExpiredSessions, {});
      const result = await job.waitUntilFinished(events, 15_000);
      expect(result.deleted).toBeGreaterThanOrEqual(1);
    } finally {
      await events.close();
    }

    const remaining = await stack.dataSource.query(
      'SELECT user_id FROM session_tokens WHERE user_id = ANY($1::int[])',
      [[expired.id, live.id]],
    );
    expect(remaining).toEqual([{ user_id: live.id }]);
    await stack.http.get('/api/user/me').set(live.auth).expect(200);
  });

  // Last: it leaves the schedule at 2 s, whose runs would race the enqueued purge of the test above.
  it('runs on a changed interval as soon as a worker with that configuration starts', async () => {
    const queue = stack.api.get(JobQueue).queue(Jobs.purgeExpiredSessions.queue);
    expect(Number((await queue.getJobScheduler(Jobs.purgeExpiredSessions.name))?.every)).toBe(3_600_000);
    const expired = await createAccount(stack);
    await stack.dataSource.query(
      `UPDATE session_tokens SET expires_at = now() - interval '1 minute' WHERE user_id = $1`,
      [expired.id],
    );
    // Every 2 s instead of hourly: the purge must run within seconds, not at the old schedule's next hour.
    const worker = await createWorkerApp(testConfig({ SESSION_PURGE_INTERVAL_SECONDS: '2' }));
    try {
      await worker.init();
      expect(Number((await queue.getJobScheduler(Jobs.purgeExpiredSessions.name))?.every)).toBe(2000);
      await waitFor(async () => {
        const [{ left }] = await stack.dataSource.query(
          'SELECT count(*)::int AS left FROM session_tokens WHERE user_id = $1',
          [expired.id],
        );
        return left === 0 ? true : undefined;
      }, 15_000);
    } finally {
      await worker.close();
    }
  }, 30_000);
});
