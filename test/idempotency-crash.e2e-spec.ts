import { Client } from 'pg';
import { AppProcess } from './support/app-process';
import {
  crashCreates,
  crashDuring,
  holdCrashAnswers,
  releaseCrashAnswers,
  retryCreates,
  sendCreate,
} from './support/crash-creates';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';

/**
 * A create whose API process is SIGKILLed after the create committed and before its answer was kept under its
 * Idempotency-Key, retried with the same key on a new process: the retry answers the resource the dead attempt made,
 * once, for every create that takes a key (see `support/crash-creates.ts` for how the moment is held).
 */
describe('Idempotency-Key across an API crash', () => {
  let stack: Stack;
  let account: TestAccount;
  let database: Client;
  const processes: AppProcess[] = [];

  beforeAll(async () => {
    stack = await startStack();
    account = await createAccount(stack);
    database = new Client({ connectionString: stack.config.databaseUrl });
    await database.connect();
  });
  afterAll(async () => {
    for (const app of processes) await app.stop();
    await database?.end();
    await stack?.close();
  });

  const start = async () => {
    // The answers are held until every create of the batch has reached its own (up to a minute on a loaded machine):
    // the held statements must outlast that wait, which the default bound (10 s) does not.
    const app = await AppProcess.start({ DATABASE_STATEMENT_TIMEOUT_MS: '120000' });
    processes.push(app);
    return app;
  };

  it('answers every create the dead attempt made, once, to its retry', async () => {
    const query = (sql: string, parameters?: unknown[]) => stack.dataSource.query(sql, parameters);
    let api = await start();
    const creates = await crashCreates(api, account, query, 'crash');
    await holdCrashAnswers(database);
    try {
      for (const batch of [creates.slice(0, 6), creates.slice(6)]) {
        expect(await crashDuring(database, api, account, batch)).toEqual(batch.map(() => 'no answer'));
        api = await start();
      }
    } finally {
      await releaseCrashAnswers(database);
    }
    const [{ unanswered }] = await query(
      `SELECT count(*)::int AS unanswered FROM idempotency_keys
        WHERE user_id = $1 AND key LIKE 'crash-%' AND response_status IS NULL`,
      [account.id],
    );
    expect(unanswered).toBe(creates.length);

    const restarted = api;
    const { answers, wrong } = await retryCreates(restarted, account, creates);
    expect(wrong).toEqual([]);
    // The secrets shown only in a create's answer are the ones the dead attempt stored.
    const token = answers.get('api-key')!.api_key.token as string;
    await stack.http.get('/api/user/api-keys').set('Authorization', `Bearer ${token}`).expect(200);
    expect(answers.get('tool')!.data.headers).toEqual([{ name: 'X-Api-Key', value: 'tool-secret' }]);

    // A later retry replays the answer now kept, and still creates nothing.
    for (const create of creates) {
      const again = await sendCreate(restarted, account, create);
      expect({ kind: create.kind, status: again.status, made: (await create.made()).length }).toEqual({
        kind: create.kind,
        status: create.status,
        made: 1,
      });
    }
  }, 240_000);
});
