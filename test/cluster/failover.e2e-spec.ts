import { QueueBackend, Queues, type QueueName } from '@app/jobs';
import { type LocalSite, startLocalSite } from '../../libs/outbound-http/test/local-site';
import { AppProcess, startAll } from '../support/app-process';
import { createAccount, sipTrunkRequest, type TestAccount } from '../support/factories';
import { LocalRedisCluster } from '../support/redis-cluster';
import { type Stack, startStack, testConfig } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Run by `npm run test:cluster` only: it starts a cluster of its own, whose master it kills. */
const onCluster = process.env.TEST_REDIS_CLUSTER === '1' ? describe : describe.skip;

/**
 * The queues on the first master killed; the test picks a queue prefix that puts all of them on one master. Their
 * hash tags differ only in the queue's name, and CRC16 is linear, so no prefix puts `calls` there too: the master that
 * holds `calls` (the webhook deliveries) is killed second.
 */
const SHARED_MASTER: QueueName[] = [Queues.documents, Queues.leads, Queues.dialer, Queues.maintenance];
const IMPORT_ROWS = 30_000;
const CAMPAIGN_LEADS = 60;

interface Answer {
  startedAt: number;
  endedAt: number;
  status: number;
  id?: number;
}

/**
 * Masters of the cluster are killed (SIGKILL) while an API process and two worker processes are busy with every kind
 * of queued work: documents being created, a 30,000-row lead import, a campaign dialling with a webhook on each
 * ended call. The first master holds the slots of the documents, imports, dials and the sweeps' schedules; the second,
 * killed once the service has carried on, those of the webhook deliveries. Each time a replica takes over; no process
 * is restarted. Requests that cannot queue meanwhile answer 503 (nothing kept), never 500. Replication is
 * asynchronous, so jobs the master acknowledged may be gone: the rows in Postgres are the truth, and the sweeps bring
 * every document, the import, every dial and every webhook to its end state anyway. The processes run apart from
 * Jest, so whatever the failover does to their connections, stopping them is bounded.
 */
onCluster('Redis Cluster failover under load', () => {
  let cluster: LocalRedisCluster;
  // In-process, on the run's own Redis: accounts, and reads of the shared database.
  let stack: Stack;
  let account: TestAccount;
  let receiver: LocalSite;
  let prefix: string;
  const apis: AppProcess[] = [];
  const workers: AppProcess[] = [];

  beforeAll(async () => {
    cluster = await LocalRedisCluster.start();
    prefix = await prefixOnOneMaster(cluster, `${process.env.TEST_QUEUE_PREFIX}:failover`);
    receiver = await startLocalSite({
      '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    });
    stack = await startStack({ worker: false });
    account = await createAccount(stack);
    const env = {
      REDIS_CLUSTER_NODES: cluster.seedNodes,
      QUEUE_PREFIX: prefix,
      // Lost work is noticed within seconds rather than the production minutes.
      DOCUMENT_STUCK_AFTER_SECONDS: '3',
      DOCUMENT_SWEEP_INTERVAL_SECONDS: '1',
      IMPORT_STUCK_AFTER_SECONDS: '3',
      WEBHOOK_STUCK_AFTER_SECONDS: '3',
      JOB_LOCK_MS: '4000',
      JOB_STALLED_CHECK_MS: '1000',
      JOB_RETRY_DELAY_MS: '200',
      DIALER_INTERVAL_SECONDS: '1',
      LOCAL_DIALER_DEMO_MS: '1000',
    };
    await startAll(apis, [() => AppProcess.start(env, 'api')]);
    await startAll(workers, [() => AppProcess.start(env, 'worker'), () => AppProcess.start(env, 'worker')]);
  }, 240_000);
  afterAll(async () => {
    // Killed, not asked to stop: bounded whatever state the failover left their connections in.
    await Promise.all([...apis, ...workers].map((child) => child.stop()));
    await Promise.allSettled([stack?.close(), receiver?.close()]);
    await cluster?.stop();
  }, 60_000);

  it('answers 503, never 500, while a master fails over, and brings every document, import, dial and webhook to its end', async () => {
    const [api] = apis;
    const call = async (method: string, path: string, body?: object | FormData) => {
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: {
          ...account.auth,
          ...(body && !(body instanceof FormData) ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    };
    const created = async (method: string, path: string, body: object | FormData) => {
      const response = await call(method, path, body);
      if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
      return response.body.data as { id: number };
    };
    const csv = (rows: number, first: number) =>
      new Blob([`phone_number\n${Array.from({ length: rows }, (_, index) => `+1415${first + index}`).join('\n')}\n`]);
    const upload = (file: Blob, fields: Record<string, string>, name: string) => {
      const form = new FormData();
      for (const [key, value] of Object.entries(fields)) form.set(key, value);
      form.set('file', file, name);
      return form;
    };

    // The campaign to dial: its leads, a caller number and an assistant whose webhook takes every ended call.
    const languages = (await call('GET', '/user/assistants/languages')).body as { id: number }[];
    const caller = await created('POST', '/user/phone-numbers/sip-trunks', sipTrunkRequest());
    const assistant = await created('POST', '/user/assistant', {
      name: 'Failover',
      type: 'outbound',
      language_id: languages[0].id,
      webhook_url: `${receiver.origin}/hook`,
      is_webhook_active: true,
    });
    const campaign = await created('POST', '/user/campaign', {
      name: 'Dialled through a failover',
      assistant_id: assistant.id,
      phone_number_ids: [caller.id],
      max_calls_in_parallel: 5,
    });
    const importOf = async (campaignId: number, importId: number) =>
      (await call('GET', `/user/campaign/${campaignId}/leads/imports/${importId}`)).body.data as {
        status: string;
        rows_total: number;
        rows_imported: number;
        rows_failed: number;
      };
    const leadsImport = await created(
      'POST',
      `/user/campaign/${campaign.id}/leads/import`,
      upload(csv(CAMPAIGN_LEADS, 5_550_000), {}, 'leads.csv'),
    );
    await waitFor(
      async () => ((await importOf(campaign.id, leadsImport.id)).status === 'completed' ? true : undefined),
      60_000,
    );
    // The big import runs into another campaign, so the dialler only ever sees its forty leads.
    const store = await created('POST', '/user/campaign', {
      name: 'Imported through a failover',
      assistant_id: assistant.id,
    });
    const knowledgebase = await created('POST', '/user/knowledgebases', { name: 'Failover' });
    const importProgress = async (importId: number) =>
      (await stack.dataSource.query('SELECT status, rows_done FROM lead_imports WHERE id = $1', [importId]))[0] as {
        status: string;
        rows_done: number;
      };
    const callsOfCampaign = async () =>
      (await stack.dataSource.query(
        `SELECT id, lead_id, status, webhook_due, webhook_response FROM calls WHERE campaign_id = $1 ORDER BY id`,
        [campaign.id],
      )) as {
        id: number;
        lead_id: number;
        status: string;
        webhook_due: boolean;
        webhook_response: { status?: number };
      }[];

    const answers: Answer[] = [];
    const readiness: Answer[] = [];
    let running = true;
    let sent = 0;
    const timed = async (work: () => Promise<{ status: number; body?: { data?: { id?: number } } }>) => {
      const startedAt = Date.now();
      const response = await work().catch(() => ({ status: 0, body: undefined }));
      return { startedAt, endedAt: Date.now(), status: response.status, id: response.body?.data?.id };
    };
    const clients = Array.from({ length: 3 }, async () => {
      while (running) {
        const index = sent++;
        answers.push(
          await timed(() =>
            call(
              'POST',
              `/user/knowledgebases/${knowledgebase.id}/documents`,
              upload(
                new Blob([`Note number ${index}: we are open on weekdays.`]),
                { name: `Note ${index}`, type: 'txt' },
                'note.txt',
              ),
            ),
          ),
        );
      }
    });
    const probe = (async () => {
      while (running) {
        readiness.push(await timed(() => call('GET', '/health/ready')));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    interface Failover {
      queues: string;
      victim: number;
      killedAt: number;
      promotedAt: number;
    }
    const failovers: Failover[] = [];
    const tags = new QueueBackend(childConfig(cluster, prefix));
    /** Kills the master that serves `queue` now and waits until a replica has taken its slots over. */
    const killMasterOf = async (queue: QueueName, queues: string) => {
      const tag = tags.redisPrefix(queue);
      const [victim] = await cluster.mastersOf([tag]);
      const killedAt = Date.now();
      cluster.kill(victim);
      const promotedAt = await waitFor(
        async () => {
          const [master] = await cluster.mastersOf([tag]).catch(() => [victim]);
          return master !== victim ? Date.now() : undefined;
        },
        30_000,
        50,
      );
      failovers.push({ queues, victim, killedAt, promotedAt });
      return promotedAt;
    };
    const acceptedSince = (since: number) =>
      answers.filter((answer) => answer.startedAt > since && answer.status === 201).length;
    let bigImport = { id: 0 };
    let atKill: { import: { status: string; rows_done: number }; calls: number };
    let webhooksAtKill: number;
    // The load stops whatever happens below, so a failed wait cannot leave requests running past the test.
    try {
      bigImport = await created(
        'POST',
        `/user/campaign/${store.id}/leads/import`,
        upload(csv(IMPORT_ROWS, 3_000_000), {}, 'big.csv'),
      );
      expect(
        (await call('POST', '/user/campaigns/update-status', { campaign_id: campaign.id, action: 'start' })).status,
      ).toBe(200);
      // The first kill once every kind of work is under way: documents accepted, the import part-way, dials placed.
      await waitFor(
        async () =>
          acceptedSince(0) >= 10 &&
          (await importProgress(bigImport.id)).rows_done >= 1000 &&
          (await callsOfCampaign()).length >= 3
            ? true
            : undefined,
        60_000,
        100,
      );
      atKill = { import: await importProgress(bigImport.id), calls: (await callsOfCampaign()).length };
      const first = await killMasterOf(Queues.documents, SHARED_MASTER.join(', '));
      // The second as soon as the service has carried on for a moment, while calls still end and fire webhooks.
      await waitFor(async () => (acceptedSince(first) >= 5 ? true : undefined), 60_000);
      webhooksAtKill = receiver.requests.length;
      const second = await killMasterOf(Queues.calls, Queues.calls);
      // Carry on until creates have gone through for a while after the last promotion.
      await waitFor(async () => (acceptedSince(second) >= 20 ? true : undefined), 60_000);
    } finally {
      running = false;
      await Promise.all([...clients, probe]);
    }

    // Every answer during the failovers was a success or a 503; the import and the dialling were under way.
    const statuses = [...answers, ...readiness].map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200 && status !== 201 && status !== 503)).toEqual([]);
    expect(atKill.import.status).toBe('processing');
    expect(atKill.import.rows_done).toBeLessThan(IMPORT_ROWS);
    expect(webhooksAtKill).toBeLessThan(CAMPAIGN_LEADS);
    // 503s belong to a failover: none before the first kill, none long after a kill.
    const refused = answers.filter((answer) => answer.status === 503);
    const [firstKill] = failovers;
    expect(refused.every((answer) => answer.endedAt >= firstKill.killedAt)).toBe(true);
    const lastKillBefore = (at: number) =>
      Math.max(...failovers.filter((f) => f.killedAt <= at).map((f) => f.killedAt));
    expect(refused.filter((answer) => answer.endedAt - lastKillBefore(answer.endedAt) >= 15_000)).toEqual([]);
    const timeline = failovers.map((failover) => {
      const within = (answer: Answer) =>
        answer.endedAt >= failover.killedAt && answer.endedAt - failover.killedAt < 15_000;
      const refusals = refused.filter(within);
      const firstSuccess = Math.min(
        ...answers
          .filter((answer) => answer.startedAt >= failover.killedAt && answer.status === 201)
          .map((answer) => answer.endedAt),
      );
      return (
        `master :${failover.victim} (${failover.queues}) killed: promotion seen after ` +
        `${failover.promotedAt - failover.killedAt} ms, first 201 at +${firstSuccess - failover.killedAt} ms, ` +
        `${refusals.length} x 503` +
        (refusals.length
          ? ` (last at +${Math.max(...refusals.map((answer) => answer.endedAt)) - failover.killedAt} ms)`
          : '') +
        `, readiness 503 in ${readiness.filter((answer) => answer.status === 503 && within(answer)).length} probes`
      );
    });

    // Every accepted document ends active.
    const accepted = answers.filter((answer) => answer.status === 201).map((answer) => answer.id!);
    const documents = await waitFor(
      async () => {
        const rows: { status: string; sweep_count: number }[] = await stack.dataSource.query(
          `SELECT status, sweep_count FROM documents WHERE id = ANY($1)`,
          [accepted],
        );
        return rows.length === accepted.length && rows.every((row) => row.status !== 'processing') ? rows : undefined;
      },
      90_000,
      250,
    );
    expect(documents.filter((row) => row.status !== 'active')).toEqual([]);

    // The import ends with every row, once.
    await waitFor(
      async () => ((await importProgress(bigImport.id)).status === 'completed' ? true : undefined),
      150_000,
      250,
    );
    expect(await importOf(store.id, bigImport.id)).toMatchObject({
      status: 'completed',
      rows_total: IMPORT_ROWS,
      rows_imported: IMPORT_ROWS,
      rows_failed: 0,
    });
    const [{ total, distinct }] = await stack.dataSource.query(
      'SELECT count(*)::int AS total, count(DISTINCT phone_number)::int AS distinct FROM leads WHERE campaign_id = $1',
      [store.id],
    );
    expect({ total, distinct }).toEqual({ total: IMPORT_ROWS, distinct: IMPORT_ROWS });

    // Every lead is dialled to a completed call, and every ended call's webhook is delivered.
    // What was still open when the wait gave up, so that a failure says which part did not end.
    let unfinished = '';
    const calls = await waitFor(
      async () => {
        const open: { status: string; count: number }[] = await stack.dataSource.query(
          `SELECT status, count(*)::int AS count FROM leads WHERE campaign_id = $1 AND status <> 'completed'
            GROUP BY status`,
          [campaign.id],
        );
        const rows = await callsOfCampaign();
        const owing = rows.filter((row) => row.webhook_due || row.webhook_response.status !== 200);
        unfinished = `leads not completed: ${JSON.stringify(open)}; calls owing a webhook: ${JSON.stringify(
          owing.slice(0, 5),
        )} (${owing.length})`;
        return open.length === 0 && owing.length === 0 ? rows : undefined;
      },
      120_000,
      250,
    ).catch(async (error: Error) => {
      const ready = await Promise.all(
        workers.map(async (child) => {
          const response = await fetch(`${child.baseUrl}/health/ready`).catch(() => undefined);
          return response ? `${response.status} ${await response.text()}` : 'unreachable';
        }),
      );
      const [row] = await stack.dataSource.query(`SELECT status FROM campaigns WHERE id = $1`, [campaign.id]);
      throw new Error(
        `${error.message}; ${unfinished}; campaign ${JSON.stringify(row)}; workers' readiness: ${ready.join(' | ')}`,
      );
    });
    const completedPerLead = new Map<number, number>();
    for (const row of calls.filter((row) => row.status === 'completed'))
      completedPerLead.set(row.lead_id, (completedPerLead.get(row.lead_id) ?? 0) + 1);
    expect(completedPerLead.size).toBe(CAMPAIGN_LEADS);
    expect([...completedPerLead.values()].every((count) => count === 1)).toBe(true);
    const deliveries = receiver.requests.filter((request) => request.path === '/hook');
    const events = new Set(deliveries.map((request) => request.headers['webhook-id']));
    expect(events.size).toBe(calls.length);

    // No process was restarted, and each is ready again.
    for (const child of [...apis, ...workers]) {
      expect(child.child.exitCode).toBeNull();
      await waitFor(
        async () => ((await fetch(`${child.baseUrl}/health/ready`)).status === 200 ? true : undefined),
        30_000,
      );
    }

    const metrics = (
      await Promise.all(workers.map(async (worker) => (await fetch(`${worker.baseUrl}/metrics`)).text()))
    ).join('\n');
    const counted = (pattern: RegExp) =>
      [...metrics.matchAll(pattern)].reduce((sum, match) => sum + Number(match[2]), 0);
    const requeued = (job: string) => counted(new RegExp(`^jobs_requeued_total\\{job="(${job})"\\} (\\d+)$`, 'gm'));
    const restarted = counted(/^workers_restarted_total\{queue="([^"]+)"\} (\d+)$/gm);
    const retried = (queue: string) =>
      counted(new RegExp(`^jobs_finished_total\\{queue="(${queue})",job="[^"]+",outcome="retrying"\\} (\\d+)$`, 'gm'));
    console.log(
      [
        ...timeline,
        `${answers.length} document creates: ${accepted.length} x 201, ${refused.length} x 503, 0 x 500`,
        `in flight at the first kill: import at row ${atKill.import.rows_done} of ${IMPORT_ROWS}, ${atKill.calls} of ` +
          `${CAMPAIGN_LEADS} calls placed; at the second: ${webhooksAtKill} webhooks delivered`,
        `end: ${accepted.length} documents active (${documents.filter((row) => row.sweep_count > 0).length} ` +
          `re-queued by the sweep), import completed with ${IMPORT_ROWS} rows once each, ${CAMPAIGN_LEADS} leads ` +
          `completed in ${calls.length} calls, ${events.size} webhooks delivered in ${deliveries.length} deliveries`,
        `re-queued by sweeps: documents ${requeued('process-document')}, imports ${requeued('import-leads')}, ` +
          `webhooks ${requeued('deliver-call-webhook')}; attempts retried: documents ${retried('documents')}, ` +
          `imports ${retried('leads')}, dials ${retried('dialer')}, webhooks ${retried('calls')}`,
        `workers replaced after taking no waiting job for 30 s: ${restarted}`,
      ].join('\n'),
    );
  }, 420_000);
});

/** The configuration the child processes run with, for the queue names it implies. */
function childConfig(cluster: LocalRedisCluster, prefix: string) {
  return testConfig({ REDIS_CLUSTER_NODES: cluster.seedNodes, QUEUE_PREFIX: prefix });
}

/**
 * A queue prefix under which every queue of SHARED_MASTER hashes to the same master, so that killing that one master
 * catches all their work at once (with per-queue hash tags they would otherwise spread over the masters).
 */
async function prefixOnOneMaster(cluster: LocalRedisCluster, base: string): Promise<string> {
  for (let attempt = 0; attempt < 2000; attempt++) {
    const prefix = `${base}${attempt}`;
    const backend = new QueueBackend(childConfig(cluster, prefix));
    const masters = await cluster.mastersOf(SHARED_MASTER.map((queue) => backend.redisPrefix(queue)));
    if (new Set(masters).size === 1) return prefix;
  }
  throw new Error('no prefix puts the queues on one master');
}
