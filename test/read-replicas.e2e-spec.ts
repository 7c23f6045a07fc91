import { randomBytes } from 'node:crypto';
import { runMigrations } from '@app/database';
import { createApiDocuments } from '../apps/api/src/api-document';
import { createAccount, type TestAccount } from './support/factories';
import { OpenApiConformance } from './support/openapi-conformance';
import { type Stack, startStack } from './support/stack';
import { postgresBinaries, startStreamingPair, type StreamingPair } from './support/streaming-replica';
import { waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-read-replicas-0123456789';
const binaries = postgresBinaries();

// Needs the machine's PostgreSQL server binaries (initdb, pg_basebackup) to build a primary and a standby of its own.
(binaries ? describe : describe.skip)('Read replicas (DATABASE_REPLICA_URLS)', () => {
  let pair: StreamingPair;
  let stack: Stack;
  let reader: TestAccount;
  let writer: TestAccount;
  let campaign: number;
  let assistant: number;
  let conformance: OpenApiConformance;

  beforeAll(async () => {
    pair = await startStreamingPair(binaries!, `replicas_${randomBytes(4).toString('hex')}`);
    await runMigrations(pair.primaryUrl);
    stack = await startStack({
      worker: false,
      env: {
        DATABASE_URL: pair.primaryUrl,
        DATABASE_REPLICA_URLS: pair.replicaUrl,
        // Replay is paused for a while below: the bound must not take the paused replica out of use meanwhile.
        DATABASE_REPLICA_MAX_LAG_SECONDS: '600',
        RUNTIME_API_TOKEN: RUNTIME_TOKEN,
      },
    });
    // Health is in neither served document (it is operations staff's): its answers are checked against the
    // document as generated, before the split.
    conformance = new OpenApiConformance(createApiDocuments(stack.api).whole);
    [reader, writer] = [await createAccount(stack, 'Reader'), await createAccount(stack, 'Writer')];
    const english = (await stack.http.get('/api/user/assistants/languages').set(writer.auth)).body.find(
      (language: { iso_2: string }) => language.iso_2 === 'en',
    ).id;
    assistant = await create(writer, 'assistant', { name: 'Caller', type: 'outbound', language_id: english });
    campaign = await create(writer, 'campaign', { name: 'Renewals', assistant_id: assistant });
    await createTool(reader, 'replicated_tool');
    // Every write so far replayed, and the API's last check of the replica has seen it.
    const target = await pair.caughtUp();
    await waitFor(async () => {
      const replica = await replicaReport();
      if (replica?.status !== 'up') return undefined;
      const [{ seen }] = await pair.onPrimary<{ seen: boolean }>(`SELECT $1::pg_lsn >= $2::pg_lsn AS seen`, [
        replica.replayed_lsn,
        target,
      ]);
      return seen || undefined;
    }, 20_000);
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    pair?.remove();
  });

  /** Creates through the API; answers the new id. */
  const create = async (owner: TestAccount, path: string, body: object) =>
    (await stack.http.post(`/api/user/${path}`).set(owner.auth).send(body).expect(201)).body.data.id as number;
  const createTool = (owner: TestAccount, name: string) =>
    create(owner, 'tools', {
      name,
      description: 'Finds an order',
      endpoint: 'http://127.0.0.1:9/orders',
      method: 'GET',
    });
  const toolNames = async (owner: TestAccount) =>
    ((await stack.http.get('/api/user/tools').set(owner.auth).expect(200)).body as { name: string }[]).map(
      (tool) => tool.name,
    );
  const listed = async (path: string, owner: TestAccount) => {
    const page = (await stack.http.get(path).set(owner.auth).expect(200)).body;
    return { total: page.total, ids: page.data.map((row: { id: number }) => row.id) };
  };
  const replicaReport = async () => {
    const response = await stack.http.get('/api/health/ready');
    expect(response.status).toBe(200);
    // Field by field as the document names the entry (up, and down with its error, below).
    expect(response.body.checks.database_replicas).toBeDefined();
    expect(
      conformance.check('get', '/api/health/ready', 200, response.headers['content-type'], response.body),
    ).toBeUndefined();
    return response.body.checks.database_replicas?.replicas?.[0] as
      { status: string; replayed_lsn?: string; error?: string } | undefined;
  };

  it('shows an account its own writes at once while replay is paused, and serves other accounts from the replica', async () => {
    await pair.onReplica(`SELECT pg_wal_replay_pause()`);
    // Written straight into the primary, not through the API: only a read from the replica misses it.
    await pair.onPrimary(
      `INSERT INTO tools (user_id, name, description, endpoint, method)
       SELECT user_id, 'unreplicated_tool', description, endpoint, method FROM tools WHERE user_id = $1`,
      [reader.id],
    );

    const tool = await createTool(writer, 'fresh_tool');
    expect(await toolNames(writer)).toEqual(['fresh_tool']);
    await stack.http.get(`/api/user/tools/${tool}`).set(writer.auth).expect(200);

    const lead = await create(writer, 'lead', { phone_number: '+14155550100', campaign_id: campaign });
    expect(await listed('/api/user/leads', writer)).toEqual({ total: 1, ids: [lead] });
    await stack.http.get(`/api/user/leads/${lead}`).set(writer.auth).expect(200);

    // A call the voice runtime records for the account counts as the account's write.
    const call = (
      await stack.http
        .put(`/api/internal/calls/replica-${writer.id}`)
        .set({ Authorization: `Bearer ${RUNTIME_TOKEN}` })
        .send({
          assistant_id: assistant,
          type: 'outbound',
          status: 'completed',
          client_phone_number: '+14155550123',
          assistant_phone_number: '+14155550999',
        })
        .expect(201)
    ).body.data.id;
    expect(await listed('/api/user/calls', writer)).toEqual({ total: 1, ids: [call] });
    await stack.http.get(`/api/user/calls/${call}`).set(writer.auth).expect(200);

    // The other account's list comes from the paused replica: without the row written behind the API's back.
    expect(await toolNames(reader)).toEqual(['replicated_tool']);
    expect((await replicaReport())?.status).toBe('up');
    // Nothing the writer did is on the replica yet: its reads above can only have come from the primary.
    const [{ tools }] = await pair.onReplica<{ tools: number }>(
      `SELECT count(*)::int AS tools FROM tools WHERE name = 'fresh_tool'`,
    );
    expect(tools).toBe(0);
  }, 30_000);

  it('documents the readiness entry of the replicas: a field it does not name, or a state it has not, is refused', () => {
    const ready = (replica: object) => ({
      status: 'ok',
      checks: { database_replicas: { status: 'up', in_use: 1, replicas: [{ replica: 'db:5432/app', ...replica }] } },
    });
    const check = (replica: object) =>
      conformance.check('get', '/api/health/ready', 200, 'application/json', ready(replica));
    expect(check({ status: 'lagging', lag_seconds: 12.5, replayed_lsn: '0/3000060' })).toBeUndefined();
    expect(check({ status: 'down', error: 'connection refused' })).toBeUndefined();
    expect(check({ status: 'up', lag: 1 })).toMatch(/additional properties 'lag'/);
    expect(check({ status: 'stale' })).toMatch(/must be equal to one of the allowed values/);
  });

  it('reads from the primary once the replica is stopped, and readiness reports it without failing', async () => {
    pair.stopReplica();
    expect((await toolNames(reader)).sort()).toEqual(['replicated_tool', 'unreplicated_tool']);
    expect(await toolNames(writer)).toEqual(['fresh_tool']);
    const report = await waitFor(async () => {
      const replica = await replicaReport();
      return replica?.status === 'down' ? replica : undefined;
    }, 10_000);
    expect(report.error).toEqual(expect.any(String));
  }, 30_000);
});
