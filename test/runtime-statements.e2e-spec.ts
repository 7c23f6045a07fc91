import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess } from './support/app-process';
import { createAccount, sipTrunkRequest } from './support/factories';
import { type Stack, startStack } from './support/stack';

const RUNTIME_TOKEN = 'runtime-token-for-statement-counts-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const TOOLS = 10;

/**
 * What the voice runtime's two hottest requests cost the database, counted from outside the code: an API process with
 * the benchmarks' statement recorder preloaded (every statement a `pg` client sends, in order). A change that adds a
 * round trip to a session or to an event post fails here, and says which statements it now runs.
 */
describe('The voice runtime’s statements per request', () => {
  let stack: Stack;
  let api: AppProcess;
  let number: string;
  let directory: string;
  let log: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'runtime-statements-'));
    log = join(directory, 'statements.jsonl');
    writeFileSync(log, '');
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    const owner = await createAccount(stack);
    const languageId = (await stack.http.get('/api/user/assistants/languages').set(owner.auth)).body[0].id as number;
    const toolIds: number[] = [];
    for (let index = 0; index < TOOLS; index++) {
      const tool = await stack.http
        .post('/api/user/tools')
        .set(owner.auth)
        .send({
          name: `lookup_order_${index}`,
          description: 'Looks an order up by its number',
          endpoint: 'https://api.example.com/orders/{order_id}',
          method: 'GET',
          schema: [{ name: 'order_id', type: 'string', description: 'The order number', required: true }],
        })
        .expect(201);
      toolIds.push(tool.body.data.id);
    }
    const trunk = await stack.http
      .post('/api/user/phone-numbers/sip-trunks')
      .set(owner.auth)
      .send(sipTrunkRequest())
      .expect(201);
    await stack.http
      .post('/api/user/assistant')
      .set(owner.auth)
      .send({
        name: 'Front desk',
        type: 'inbound',
        language_id: languageId,
        phone_number_id: trunk.body.data.id,
        tool_ids: toolIds,
      })
      .expect(201);
    number = trunk.body.data.phone_number;
    api = await AppProcess.start({ RUNTIME_API_TOKEN: RUNTIME_TOKEN, STATEMENT_LOG: log }, 'api', [
      join(__dirname, '..', 'bench', 'support', 'statement-recorder.ts'),
    ]);
  }, 120_000);
  afterAll(async () => {
    await api?.stop();
    await stack?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${api.baseUrl}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const session = (externalId: string) =>
    post(`/internal/calls/${externalId}/session`, deployment, {
      type: 'inbound',
      client_phone_number: '+14155550199',
      assistant_phone_number: number,
    });
  /** The statements the process ran while `action` ran: their first words, in order. */
  const statementsOf = async (action: () => Promise<void>): Promise<string[]> => {
    writeFileSync(log, '');
    await action();
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as [string, unknown[], number, number])
      .sort((one, other) => one[2] - other[2])
      .map(([text]) => text.replace(/\s+/g, ' ').trim());
  };
  /** Commits the statements cost: a transaction's one, and one for each write outside a transaction. */
  const commits = (statements: string[]) => {
    let count = 0;
    let inTransaction = false;
    for (const text of statements) {
      if (/^(BEGIN|START TRANSACTION)\b/i.test(text)) inTransaction = true;
      else if (/^(COMMIT|ROLLBACK)\b/i.test(text)) {
        inTransaction = false;
        count++;
      } else if (!inTransaction && /\b(INSERT|UPDATE|DELETE)\b/i.test(text)) count++;
    }
    return count;
  };

  it('opens a session of a new call (10 tools linked) in 6 statements, 2 of them commits', async () => {
    // Warm: the process's caches (the assistant, the number) are what a busy process has.
    for (let warmUp = 0; warmUp < 3; warmUp++) expect((await session(`warm-${randomUUID()}`)).status).toBe(201);
    let answer!: Response;
    const statements = await statementsOf(async () => {
      answer = await session(`counted-${randomUUID()}`);
    });
    expect(answer.status).toBe(201);
    expect(((await answer.json()) as { data: { tools: unknown[] } }).data.tools).toHaveLength(TOOLS);
    // The call by its id; the number's assistants; the write's read and the write (with the account's call slot);
    // the session's assistant with its tools; the token with the call's `call.started` mark.
    expect(statements).toEqual([
      expect.stringMatching(/^SELECT \* FROM calls WHERE external_id = \$1$/),
      expect.stringMatching(/^SELECT .* FROM phone_numbers p JOIN assistants a /),
      expect.stringMatching(/^SELECT .* FROM \(SELECT \$\d+::varchar AS external_id\) wanted /),
      expect.stringMatching(/^WITH slot AS \(.*INSERT INTO calls /),
      expect.stringMatching(/^SELECT a\.id, .*\bt\.name\b/),
      expect.stringMatching(/^WITH token AS \( INSERT INTO call_tokens /),
    ]);
    expect(commits(statements)).toBe(2);
  });

  it('stores an event post in one statement, the call token checked from memory', async () => {
    const externalId = `events-${randomUUID()}`;
    const opened = await session(externalId);
    const token = ((await opened.json()) as { data: { token: string } }).data.token;
    const turn = (seq: number) =>
      post(
        `/internal/calls/${externalId}/events`,
        { Authorization: `Bearer ${token}` },
        {
          events: [{ seq, type: 'transcript', role: 'user', text: `Turn ${seq}.`, at: new Date().toISOString() }],
        },
      );
    expect((await turn(0)).status).toBe(200);
    let answer!: Response;
    const statements = await statementsOf(async () => {
      answer = await turn(1);
    });
    expect(answer.status).toBe(200);
    expect(statements).toEqual([expect.stringMatching(/^WITH call AS /)]);
    expect(commits(statements)).toBe(1);
  });
});
