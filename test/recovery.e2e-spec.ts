import type { RedisQueueBackend } from 'bullmq';
import Redis from 'ioredis';
import { DocumentsRepository } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { DocumentSweeper } from '../apps/worker/src/documents/document-sweeper.service';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { QUEUE_BACKEND, REDIS_URL } from './support/test-environment';
import { waitFor } from './support/wait-for';

describe('Recovery that does not depend on luck', () => {
  let stack: Stack;
  let account: TestAccount;
  let redis: Redis | undefined;

  beforeAll(async () => {
    stack = await startStack({ env: { DOCUMENT_SWEEP_INTERVAL_SECONDS: '3600' } });
    account = await createAccount(stack);
    if (QUEUE_BACKEND === 'redis') redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    redis?.disconnect();
    await stack.close();
  });

  const workerReadiness = async () => {
    const server = stack.worker!.getHttpServer();
    const address = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${address.port}/api/health/ready`);
    return { status: response.status, body: (await response.json()) as { checks: Record<string, { error?: string }> } };
  };

  /** What a Redis restart without persistence does to this run's data: every key of its prefix is gone. */
  const loseThisRunsRedisData = async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis!.scan(cursor, 'MATCH', `${stack.config.queuePrefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis!.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  };

  // A Redis restart without persistence; PostgreSQL does not lose committed schedules.
  (QUEUE_BACKEND === 'redis' ? it : it.skip)(
    'reports missing schedules in readiness and registers them again when the worker reconnects',
    async () => {
      const queue = stack.api.get(JobQueue).queue(Jobs.sweepStuckDocuments.queue);
      expect((await workerReadiness()).status).toBe(200);

      await loseThisRunsRedisData();
      expect(await queue.getJobScheduler(Jobs.sweepStuckDocuments.name)).toBeUndefined();
      const degraded = await workerReadiness();
      expect(degraded.status).toBe(503);
      expect(degraded.body.checks.schedules.error).toMatch(/sweep-stuck-documents/);

      // The restarted Redis drops the worker's connections; they reconnect on their own.
      const workerQueue = stack.worker!.get(JobQueue).queue(Jobs.sweepStuckDocuments.queue);
      (await (workerQueue.getBackend() as RedisQueueBackend).connection.client).disconnect(true);

      await waitFor(async () => ((await workerReadiness()).status === 200 ? true : undefined), 20_000);
      const schedulers = (await queue.getJobSchedulers()).map((scheduler) => scheduler.key);
      expect(schedulers).toEqual(
        expect.arrayContaining([Jobs.sweepStuckDocuments.name, Jobs.purgeExpiredSessions.name]),
      );
    },
    40_000,
  );

  it('counts one rescue when two sweeps run at once', async () => {
    // The schedules put back above run once at once; let that sweep finish so only ours race.
    const maintenance = stack.api.get(JobQueue).queue(Jobs.sweepStuckDocuments.queue);
    await waitFor(async () => {
      const counts = await maintenance.getJobCounts('waiting', 'active');
      return counts.waiting + counts.active === 0 ? true : undefined;
    }, 15_000);
    const [knowledgebase] = await stack.dataSource.query(
      `INSERT INTO knowledgebases (user_id, name) VALUES ($1, 'Sweeps') RETURNING id`,
      [account.id],
    );
    const [row] = await stack.dataSource.query(
      `INSERT INTO documents (user_id, knowledgebase_id, name, type, status, sweep_count, updated_at)
       VALUES ($1, $2, 'Lost', 'txt', 'processing', 0, now() - interval '1 hour') RETURNING id`,
      [account.id, knowledgebase.id],
    );
    const sweeper = stack.worker!.get(DocumentSweeper);
    const results = await Promise.all([sweeper.sweep(), sweeper.sweep(), sweeper.sweep()]);
    expect(results.reduce((sum, result) => sum + result.requeued, 0)).toBe(1);
    const [after] = await stack.dataSource.query('SELECT sweep_count FROM documents WHERE id = $1', [row.id]);
    expect(after.sweep_count).toBe(1);
  });

  it('does not count a rescue of a document that finished meanwhile', async () => {
    const [knowledgebase] = await stack.dataSource.query(
      `INSERT INTO knowledgebases (user_id, name) VALUES ($1, 'Finished') RETURNING id`,
      [account.id],
    );
    const [row] = await stack.dataSource.query(
      `INSERT INTO documents (user_id, knowledgebase_id, name, type, status, sweep_count, updated_at)
       VALUES ($1, $2, 'Done', 'txt', 'processing', 2, now() - interval '1 hour') RETURNING id`,
      [account.id, knowledgebase.id],
    );
    // The document finishes between the sweep's look-up and its claim: the claim re-checks the locked row.
    const documents = stack.worker!.get(DocumentsRepository);
    await stack.dataSource.query(`UPDATE documents SET status = 'active' WHERE id = $1`, [row.id]);
    expect(await documents.claimRescue(row.id, stack.config.documentStuckAfterSeconds)).toBeUndefined();
    const [after] = await stack.dataSource.query('SELECT sweep_count, status FROM documents WHERE id = $1', [row.id]);
    expect(after).toEqual({ sweep_count: 2, status: 'active' });
  });
});
