import { JobQueue, Jobs } from '@app/jobs';
import { createAccount, TestAccount } from './support/factories';
import { Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-retention-0123456789';

describe('Call retention (CALL_RETENTION_DAYS)', () => {
  let stack: Stack;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, CALL_RETENTION_DAYS: '30' } });
    account = await createAccount(stack);
  });
  afterAll(() => stack.close());

  const total = async (query: Record<string, string> = {}) =>
    (await stack.http.get('/api/user/calls').query(query).set(account.auth).expect(200)).body.total as number;

  it('removes calls past the retention on the worker, and the lists’ exact totals stay exact', async () => {
    const english = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body.find(
      (language: { iso_2: string }) => language.iso_2 === 'en',
    ).id;
    const assistant = (
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'Caller', type: 'outbound', language_id: english })
        .expect(201)
    ).body.data.id;
    const statuses = ['completed', 'completed', 'failed', 'completed', 'busy'];
    for (const [index, status] of statuses.entries()) {
      await stack.http
        .put(`/api/internal/calls/retention-${account.id}-${index}`)
        .set({ Authorization: `Bearer ${RUNTIME_TOKEN}` })
        .send({
          assistant_id: assistant,
          type: 'outbound',
          status,
          client_phone_number: '+14155550123',
          assistant_phone_number: '+14155550999',
        })
        .expect(201);
    }
    // The first three are 40 and 31 days old; the others are recent, one of them 29 days old.
    await stack.dataSource.query(
      `UPDATE calls SET created_at = now() - make_interval(days => CASE external_id
         WHEN $2 THEN 40 WHEN $3 THEN 31 WHEN $4 THEN 31 WHEN $5 THEN 29 ELSE 0 END)
        WHERE user_id = $1`,
      [account.id, ...[0, 1, 2, 3].map((index) => `retention-${account.id}-${index}`)],
    );
    expect(await total()).toBe(5);

    await stack.api.get(JobQueue).enqueue(Jobs.purgeOldCalls, {});
    await waitFor(async () => ((await total()) === 2 ? true : undefined), 15_000);
    const [{ rows }] = await stack.dataSource.query(`SELECT count(*)::int AS rows FROM calls WHERE user_id = $1`, [
      account.id,
    ]);
    expect({
      rows,
      completed: await total({ status: 'completed' }),
      failed: await total({ status: 'failed' }),
      busy: await total({ status: 'busy' }),
    }).toEqual({ rows: 2, completed: 1, failed: 0, busy: 1 });
  }, 45_000);
});
