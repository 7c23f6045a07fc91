import { AppProcess, startAll } from '../support/app-process';
import { createAccount, sipTrunkRequest, type TestAccount } from '../support/factories';
import { type Stack, startStack } from '../support/stack';
import { REDIS_CLUSTER_NODES } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const onCluster = REDIS_CLUSTER_NODES() ? describe : describe.skip;

/**
 * Two API processes and three workers on the run's cluster, as operators scale them: the limits they share live in
 * Redis (the rate limit) and Postgres (idempotency keys, the dialer's claims), never in one process.
 */
onCluster('Two APIs and three workers on a Redis Cluster', () => {
  let stack: Stack;
  let account: TestAccount;
  const apis: AppProcess[] = [];
  const workers: AppProcess[] = [];

  beforeAll(async () => {
    // Its own queue prefix: these workers' fast dial schedule stays away from the other files' queues.
    const shared = { QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}:many` };
    stack = await startStack({ worker: false, env: shared });
    account = await createAccount(stack);
    // In two rounds, so that five boots at once do not outlast each one's wait on a busy machine; whatever started
    // is stopped by afterAll even when another did not.
    await startAll(apis, [
      () => AppProcess.start({ ...shared, RATE_LIMIT_PER_MINUTE: '20' }, 'api'),
      () => AppProcess.start({ ...shared, RATE_LIMIT_PER_MINUTE: '20' }, 'api'),
    ]);
    const worker = () =>
      AppProcess.start({ ...shared, DIALER_INTERVAL_SECONDS: '1', LOCAL_DIALER_DEMO_MS: '1500' }, 'worker');
    await startAll(workers, [worker, worker, worker]);
  }, 240_000);
  afterAll(async () => {
    await Promise.all([...apis, ...workers].map((child) => child.stop()));
    await stack?.close();
  });

  const send = (api: AppProcess, method: string, path: string, body?: object, headers: Record<string, string> = {}) =>
    fetch(`${api.baseUrl}${path}`, {
      method,
      headers: { ...account.auth, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });

  it("holds one token's rate limit across both APIs", async () => {
    // A token of its own: spending its budget leaves the other tests' alone.
    const limited = await createAccount(stack);
    const statuses: number[] = [];
    for (let index = 0; index < 30; index++) {
      const response = await fetch(`${apis[index % 2].baseUrl}/user/me`, { headers: limited.auth });
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.slice(20)).toEqual(Array(10).fill(429));
  });

  it('creates once for an Idempotency-Key sent to both APIs at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, async (_, index) => {
        const response = await send(
          apis[index % 2],
          'POST',
          '/user/knowledgebases',
          { name: 'Shared FAQ' },
          {
            'Idempotency-Key': 'two-apis-1',
          },
        );
        return { status: response.status, id: ((await response.json()) as { data: { id: number } }).data.id };
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
    const [{ count }] = await stack.dataSource.query(
      `SELECT count(*)::int AS count FROM knowledgebases WHERE user_id = $1 AND name = 'Shared FAQ'`,
      [account.id],
    );
    expect(count).toBe(1);
  });

  it("keeps a campaign's parallel cap across three workers, dialling each lead once", async () => {
    const post = async (path: string, body: object) => {
      const response = await send(apis[0], 'POST', `/user/${path}`, body);
      expect(response.status).toBeLessThan(300);
      return ((await response.json()) as { data: { id: number } }).data;
    };
    const caller = await post('phone-numbers/sip-trunks', sipTrunkRequest());
    const languages = (await (await send(apis[1], 'GET', '/user/assistants/languages')).json()) as { id: number }[];
    const assistant = await post('assistant', { name: 'Dialer', type: 'outbound', language_id: languages[0].id });
    const campaign = await post('campaign', {
      name: 'Across workers',
      assistant_id: assistant.id,
      phone_number_ids: [caller.id],
      max_calls_in_parallel: 2,
    });
    const leads = 8;
    for (let index = 0; index < leads; index++) {
      await post('lead', { phone_number: `+1415556${String(index).padStart(4, '0')}`, campaign_id: campaign.id });
    }
    const started = await send(apis[1], 'POST', '/user/campaigns/update-status', {
      campaign_id: campaign.id,
      action: 'start',
    });
    expect(started.status).toBe(200);

    let most = 0;
    await waitFor(
      async () => {
        const [row] = await stack.dataSource.query(
          `SELECT count(*) FILTER (WHERE status IN ('initiated', 'ringing', 'in-progress'))::int AS in_flight,
                  (SELECT count(*)::int FROM leads WHERE campaign_id = $1 AND status = 'completed') AS completed
             FROM calls WHERE campaign_id = $1`,
          [campaign.id],
        );
        most = Math.max(most, row.in_flight);
        return row.completed === leads ? true : undefined;
      },
      90_000,
      50,
    );
    expect(most).toBe(2);
    const dialled: { lead_id: number }[] = await stack.dataSource.query(
      `SELECT (d.request->'metadata'->>'lead_id')::int AS lead_id
         FROM local_dial_requests d JOIN calls c ON c.external_id = d.attempt_id WHERE c.campaign_id = $1`,
      [campaign.id],
    );
    expect(dialled).toHaveLength(leads);
    expect(new Set(dialled.map((dial) => dial.lead_id)).size).toBe(leads);
  }, 120_000);
});
