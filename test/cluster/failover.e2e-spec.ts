import { JobQueue, Jobs, QueueBackend } from '@app/jobs';
import { createAccount, TestAccount } from '../support/factories';
import { LocalRedisCluster } from '../support/redis-cluster';
import { Stack, startStack } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Run by `npm run test:cluster` only: it starts a cluster of its own, whose master it kills. */
const onCluster = process.env.TEST_REDIS_CLUSTER === '1' ? describe : describe.skip;

interface Answer {
  startedAt: number;
  endedAt: number;
  status: number;
}

/**
 * A master of the cluster is killed (SIGKILL) while clients keep creating documents. Its replica takes over; the API
 * and the worker carry on by themselves. Creates that cannot be queued meanwhile answer 503 (nothing kept), never
 * 500; every document that was answered 201 ends active, the sweeper re-queueing any whose job the dead master took
 * with it (replication is asynchronous, so a write it acknowledged may never have reached the replica).
 */
onCluster('Redis Cluster failover under load', () => {
  let cluster: LocalRedisCluster;
  let stack: Stack;
  let account: TestAccount;

  beforeAll(async () => {
    cluster = await LocalRedisCluster.start();
    stack = await startStack({
      env: {
        REDIS_CLUSTER_NODES: cluster.seedNodes,
        // A lost job is noticed within seconds rather than the production quarter of an hour.
        DOCUMENT_STUCK_AFTER_SECONDS: '3',
        DOCUMENT_SWEEP_INTERVAL_SECONDS: '1',
        JOB_LOCK_MS: '4000',
        JOB_STALLED_CHECK_MS: '1000',
      },
    });
    account = await createAccount(stack);
  }, 90_000);
  afterAll(async () => {
    try {
      await stack?.close();
    } finally {
      await cluster?.stop();
    }
  }, 60_000);

  it('answers 503, never 500, while a master fails over, and finishes every accepted document', async () => {
    const knowledgebase = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Failover' }).expect(201)
    ).body.data.id;
    const create = async (index: number): Promise<Answer & { id?: number }> => {
      const startedAt = Date.now();
      const response = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
        .set(account.auth)
        .field('name', `Note ${index}`)
        .field('type', 'txt')
        .attach('file', Buffer.from(`Note number ${index}: we are open on weekdays.`), 'note.txt');
      return { startedAt, endedAt: Date.now(), status: response.status, id: response.body?.data?.id };
    };
    const answers: (Answer & { id?: number })[] = [];
    const readiness: Answer[] = [];
    let running = true;
    let sent = 0;
    const clients = Array.from({ length: 3 }, async () => {
      while (running) answers.push(await create(sent++));
    });
    const probe = (async () => {
      while (running) {
        const startedAt = Date.now();
        const response = await stack.http.get('/api/health/ready');
        readiness.push({ startedAt, endedAt: Date.now(), status: response.status });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // The load stops whatever happens below, so a failed wait cannot leave requests running past the test.
    let slot: number, victim: number, killedAt: number, promotedAt: number;
    try {
      // The master holding the documents queue's slot is the one to lose.
      slot = await cluster.slotOf(new QueueBackend(stack.config).redisPrefix('documents'));
      await waitFor(
        async () => (answers.filter((answer) => answer.status === 201).length >= 10 ? true : undefined),
        30_000,
      );
      victim = await cluster.masterOf(slot);
      killedAt = Date.now();
      cluster.kill(victim);
      promotedAt = await waitFor(
        async () => ((await cluster.masterOf(slot).catch(() => victim)) !== victim ? Date.now() : undefined),
        30_000,
        50,
      );
      // Carry on until creates have gone through for a while after the promotion.
      await waitFor(
        async () =>
          answers.filter((answer) => answer.startedAt > promotedAt && answer.status === 201).length >= 20
            ? true
            : undefined,
        60_000,
      );
    } finally {
      running = false;
      await Promise.all([...clients, probe]);
    }

    const statuses = [...answers, ...readiness].map((answer) => answer.status);
    expect(statuses.filter((status) => status >= 500 && status !== 503)).toEqual([]);
    expect(answers.every((answer) => answer.status === 201 || answer.status === 503)).toBe(true);
    const refused = answers.filter((answer) => answer.status === 503);
    const lastRefusal = Math.max(killedAt, ...refused.map((answer) => answer.endedAt));
    const firstSuccess = Math.min(
      ...answers
        .filter((answer) => answer.startedAt >= killedAt && answer.status === 201)
        .map((answer) => answer.endedAt),
    );
    // 503s belong to the failover: none before the kill, none long after it.
    expect(refused.every((answer) => answer.endedAt >= killedAt)).toBe(true);
    expect(lastRefusal - killedAt).toBeLessThan(15_000);

    const accepted = answers.filter((answer) => answer.status === 201).map((answer) => answer.id!);
    const documents = await waitFor(
      async () => {
        const rows: { id: number; status: string; sweep_count: number }[] = await stack.dataSource.query(
          `SELECT id, status, sweep_count FROM documents WHERE id = ANY($1)`,
          [accepted],
        );
        return rows.length === accepted.length && rows.every((row) => row.status !== 'processing') ? rows : undefined;
      },
      60_000,
      250,
    );
    expect(documents.filter((row) => row.status !== 'active')).toEqual([]);

    const rescued = documents.filter((row) => row.sweep_count > 0).length;
    // A job whose worker lost its lock during the failover is taken over by a worker and counted as stalled.
    const finishedJobs = await stack.api
      .get(JobQueue, { strict: false })
      .queue(Jobs.processDocument.queue)
      .getJobs(['completed', 'failed']);
    const takenOver = finishedJobs.filter((job) => job.stalledCounter > 0).length;
    const readinessDown = readiness.filter((answer) => answer.status === 503);
    console.log(
      [
        `Failover of master :${victim} (slot ${slot}): promotion seen ${promotedAt - killedAt} ms after the kill`,
        `first 201 after the kill at +${firstSuccess - killedAt} ms, last 503 at +${lastRefusal - killedAt} ms`,
        `${answers.length} creates: ${accepted.length} x 201, ${refused.length} x 503, 0 x 500`,
        `readiness 503 ${readinessDown.length} of ${readiness.length} probes`,
        `${rescued} accepted document(s) re-queued by the sweeper after their job was lost, ${takenOver} job(s) taken ` +
          `over after a lost lock; all ${accepted.length} active`,
      ].join('\n'),
    );
  }, 180_000);
});
