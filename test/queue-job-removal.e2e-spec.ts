import { Client } from 'pg';
import type { Queue } from 'bullmq';
import { POSTGRES_QUEUE_SCHEMA, QueueBackend } from '@app/jobs';
import { testConfig } from './support/stack';
import { waitFor } from './support/wait-for';

/**
 * On the PostgreSQL queue backend, a job a worker has taken is not removed from under it, as on Redis, where
 * `Job.remove` throws for a job a worker holds: the attempt under way would otherwise go on with no job, and what it
 * writes would land after the removal was reported done. The moment that matters is a delayed job coming due while
 * a worker takes it; here the worker's claim (BullMQ's own `move_to_active`) is held open in a transaction of its own
 * while the removal is asked for, and committed once the removal waits for it. Runs whatever the run's backend: the
 * PostgreSQL one needs only the run's database.
 */
describe('Removing a job a worker is taking, on the PostgreSQL queue backend', () => {
  const config = testConfig({ QUEUE_BACKEND: 'postgres' });
  const queueName = `removal-${Date.now()}`;
  let queue: Queue;
  let worker: Client;
  let observer: Client;

  beforeAll(async () => {
    queue = new QueueBackend(config).createQueue(queueName);
    await queue.waitUntilReady();
    worker = new Client({ connectionString: config.databaseUrl, options: `-c search_path=${POSTGRES_QUEUE_SCHEMA}` });
    observer = new Client({ connectionString: config.databaseUrl });
    await Promise.all([worker.connect(), observer.connect()]);
  });
  afterAll(async () => {
    await queue.close();
    await Promise.all([worker.end(), observer.end()]);
  });

  /** A delayed job that has come due and that no worker has taken yet. */
  async function dueJob(id: string) {
    await queue.add('due', {}, { jobId: id, delay: 1 });
    const job = (await queue.getJob(id))!;
    await waitFor(async () => (Date.now() > job.timestamp + 1 ? true : undefined));
    expect(await job.getState()).toBe('delayed');
    return job;
  }

  /** Takes the next job as a worker does, in a transaction left open: the job is the worker's once it commits. */
  async function beginClaim(): Promise<string> {
    await worker.query('BEGIN');
    const { rows } = await worker.query<{ id: string }>(
      `SELECT id FROM move_to_active($1, 'worker-token', 30000, $2, 'worker', NULL, NULL)`,
      [queueName, Date.now()],
    );
    return rows[0]?.id;
  }

  /**
   * Asks for the removal and answers once it waits on the claim's lock (it must not settle first), with its outcome to
   * come: removed or refused. (Wrapped: an async function answering a promise would wait for that one too.)
   */
  async function removalWaitingOnClaim(remove: () => Promise<void>): Promise<{ outcome: Promise<string> }> {
    let settled = false;
    const removal = remove().then(
      () => 'removed',
      (error: Error) => `refused: ${error.message}`,
    );
    void removal.then(() => (settled = true));
    await waitFor(async () => {
      if (settled) return true;
      const { rows } = await observer.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return rows.length > 0 ? true : undefined;
    });
    expect(settled).toBe(false);
    return { outcome: removal };
  }

  it('refuses to remove a delayed job that a worker takes as it comes due, and the worker keeps it', async () => {
    const job = await dueJob('taken-by-job');
    expect(await beginClaim()).toBe('taken-by-job');
    const removal = await removalWaitingOnClaim(() => job.remove());
    await worker.query('COMMIT');
    expect(await removal.outcome).toMatch(/^refused: .*locked by another worker/);
    expect(await (await queue.getJob('taken-by-job'))?.getState()).toBe('active');
  });

  it('removes a due job that no worker took, and a worker taking it after finds nothing', async () => {
    const job = await dueJob('not-taken');
    await job.remove();
    expect(await beginClaim()).toBeUndefined();
    await worker.query('COMMIT');
    expect(await queue.getJob('not-taken')).toBeUndefined();
  });
});
