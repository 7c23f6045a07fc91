import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { CallDeliveriesRepository, dataSourceOptions, ReadReplicas } from '@app/database';
import { SecretBox } from '@app/crypto';
import { JobQueue, LiveSignals } from '@app/jobs';
import { OutboundHttp } from '@app/outbound-http';
import { CallWebhooks } from '../apps/worker/src/calls/call-webhooks.service';
import { JobMetrics } from '../apps/worker/src/job-metrics';
import { type LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { recordQueries, type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-statement-counts-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };

/**
 * The runtime's hot paths pinned by the statements they send PostgreSQL: a turn posted every few hundred milliseconds
 * by every live call, a session opened by every call that rings, and the `call.ended` webhook every ended call of a
 * hooked assistant gets. A change that adds a round trip to either fails
 * here, and says so, rather than in a benchmark nobody runs. A transaction's BEGIN and COMMIT count as statements.
 */
describe('Statements a runtime request costs', () => {
  let stack: Stack;
  let owner: TestAccount;
  let number: string;

  /** The statements (their first words) the API sent while `work` ran. */
  const statementsOf = async (work: () => Promise<unknown>): Promise<string[]> => {
    const queries = recordQueries(stack.dataSource);
    try {
      await work();
      return queries.statements().map((sql) => sql.trim().split(/\s+/)[0].toUpperCase());
    } finally {
      queries.restore();
    }
  };
  const session = (externalId: string) =>
    stack.http
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({ type: 'inbound', client_phone_number: '+14155550199', assistant_phone_number: number });
  const turn = (externalId: string, token: string, seq: number) =>
    stack.http
      .post(`/api/internal/calls/${externalId}/events`)
      .set({ Authorization: `Bearer ${token}` })
      .send({ events: [{ seq, type: 'transcript', role: 'user', text: 'Hello there', at: new Date().toISOString() }] });

  beforeAll(async () => {
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    owner = await createAccount(stack);
    const post = (path: string, body: object) => stack.http.post(`/api/user/${path}`).set(owner.auth).send(body);
    const languages = (await stack.http.get('/api/user/assistants/languages').set(owner.auth)).body as {
      id: number;
      iso_2: string;
    }[];
    const trunk = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    const tools: number[] = [];
    for (let index = 0; index < 10; index++) {
      const tool = await post('tools', {
        name: `tool_${index}`,
        description: 'Looks something up',
        endpoint: 'https://tools.example.com/lookup',
        method: 'GET',
      }).expect(201);
      tools.push(tool.body.data.id);
    }
    await post('assistant', {
      name: 'Front desk',
      type: 'inbound',
      language_id: languages.find((language) => language.iso_2 === 'en')!.id,
      phone_number_id: trunk.id,
      tool_ids: tools,
    }).expect(201);
    number = trunk.phone_number;
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('stores a turn with one statement, its own commit', async () => {
    const externalId = `statements-${randomUUID()}`;
    const token = (await session(externalId).expect(201)).body.data.token as string;
    // The token's first use asks the database whether it opens the call.
    expect(await statementsOf(() => turn(externalId, token, 1).expect(200))).toEqual(['SELECT', 'WITH']);
    for (let seq = 2; seq <= 4; seq++) {
      expect(await statementsOf(() => turn(externalId, token, seq).expect(200))).toEqual(['WITH']);
    }
    // With the deployment's token, the same.
    expect(
      await statementsOf(() =>
        stack.http
          .post(`/api/internal/calls/${externalId}/events`)
          .set(deployment)
          .send({ events: [{ seq: 9, type: 'note', text: 'Noted', at: new Date().toISOString() }] })
          .expect(200),
      ),
    ).toEqual(['WITH']);
  });

  it('delivers an ended call reading what it sends in one statement, with or without turns', async () => {
    const receiver: LocalSite = await startLocalSite({
      '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
    });
    // A data source of the delivery's own: the worker's pool also serves its queue's sweeps, which are not counted.
    const dataSource = await new DataSource(dataSourceOptions(stack.config.databaseUrl, 1)).initialize();
    try {
      const worker = stack.worker!;
      const webhooks = new CallWebhooks(
        new CallDeliveriesRepository(dataSource, worker.get(ReadReplicas)),
        worker.get(OutboundHttp),
        worker.get(SecretBox),
        worker.get(JobQueue),
        stack.config,
        worker.get(JobMetrics),
        worker.get(LiveSignals),
      );
      const hooked = await stack.http
        .post('/api/user/assistant')
        .set(owner.auth)
        .send({
          name: 'Caller',
          type: 'outbound',
          language_id: (await stack.http.get('/api/user/assistants/languages').set(owner.auth)).body[0].id,
          webhook_url: `${receiver.origin}/hook`,
          is_webhook_active: true,
        })
        .expect(201);
      const write = (externalId: string, fields: object) =>
        stack.http
          .put(`/api/internal/calls/${externalId}`)
          .set(deployment)
          .send({
            assistant_id: hooked.body.data.id,
            type: 'outbound',
            client_phone_number: '+14155550123',
            assistant_phone_number: '+14155550999',
            ...fields,
          });
      const quiet = `statements-${randomUUID()}`;
      await write(quiet, { status: 'completed', duration: 30 }).expect(201);
      const talked = `statements-${randomUUID()}`;
      await write(talked, { status: 'in-progress' }).expect(201);
      for (const seq of [1, 2]) {
        await stack.http
          .post(`/api/internal/calls/${talked}/events`)
          .set(deployment)
          .send({ events: [{ seq, type: 'transcript', role: 'user', text: `Turn ${seq}`, at: new Date().toISOString() }] })
          .expect(200);
      }
      await write(talked, { status: 'completed', duration: 30 }).expect(200);
      for (const [externalId, turns] of [
        [quiet, []],
        [talked, ['Turn 1', 'Turn 2']],
      ] as const) {
        const [{ id }] = (await stack.dataSource.query(`SELECT id FROM calls WHERE external_id = $1`, [
          externalId,
        ])) as { id: number }[];
        // The worker's own delivery of the write first, so the one below is the only one in flight.
        const deliveredTo = () =>
          receiver.requests.filter((request) => JSON.parse(request.body).call.external_id === externalId);
        await waitFor(async () => (deliveredTo().length > 0 ? true : undefined));
        const before = deliveredTo().length;
        const job = { attemptsMade: 0, opts: { attempts: 3 } } as Job;
        const queries = recordQueries(dataSource);
        try {
          await expect(webhooks.deliver({ callId: id }, job)).resolves.toEqual({ status: 'delivered' });
          // The call, its assistant's webhook, its lead and its turns read at once; the receiver's answer kept.
          expect(queries.statements().map((sql) => sql.trim().split(/\s+/)[0].toUpperCase())).toEqual([
            'SELECT',
            'UPDATE',
          ]);
        } finally {
          queries.restore();
        }
        const sent = deliveredTo()
          .slice(before)
          .map((request) => JSON.parse(request.body) as { event: string; call: { turns: { text: string }[] } });
        expect(sent).toHaveLength(1);
        expect(sent[0].event).toBe('call.ended');
        expect(sent[0].call.turns.map((turn) => turn.text)).toEqual(turns);
      }
    } finally {
      await dataSource.destroy();
      await receiver.close();
    }
  });

  it('opens a session of an assistant with 10 tools in a fixed number of statements', async () => {
    const first = await statementsOf(() => session(`statements-${randomUUID()}`).expect(201));
    const second = await statementsOf(() => session(`statements-${randomUUID()}`).expect(201));
    expect(second).toEqual(first);
    expect(first).toEqual(SESSION_STATEMENTS);
  });
});

/**
 * A new inbound session's statements today, each its own transaction (docs/benchmarks.md, the runtime's hot paths):
 * the call by its external id, the number's holders, the assistant, the call created (a `WITH`: the statement takes
 * one of the account's call slots as it inserts the call, so the account's limit of calls in progress costs no round
 * trip), and the assistant with its tools and knowledgebase read in the statement that stores the call token and
 * names the call's `call.started` event (a `WITH`). Two commits.
 */
const SESSION_STATEMENTS = ['SELECT', 'SELECT', 'SELECT', 'WITH', 'WITH'];
