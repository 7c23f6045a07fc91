import { randomUUID } from 'node:crypto';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { recordQueries, type Stack, startStack } from './support/stack';

const RUNTIME_TOKEN = 'runtime-token-for-statement-counts-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };

/**
 * The runtime's hot paths pinned by the statements they send PostgreSQL: a turn posted every few hundred milliseconds
 * by every live call, and a session opened by every call that rings. A change that adds a round trip to either fails
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
