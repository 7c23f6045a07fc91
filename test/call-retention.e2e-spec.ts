import { JobQueue, Jobs } from '@app/jobs';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-retention-0123456789';

describe('Call retention (CALL_RETENTION_DAYS)', () => {
  let stack: Stack;
  let account: TestAccount;

  let assistant: number;

  beforeAll(async () => {
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, CALL_RETENTION_DAYS: '30' } });
    account = await createAccount(stack);
    const english = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body.find(
      (language: { iso_2: string }) => language.iso_2 === 'en',
    ).id;
    assistant = (
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'Caller', type: 'outbound', language_id: english })
        .expect(201)
    ).body.data.id;
  });
  afterAll(() => stack.close());

  /** The voice runtime's write of a call, as it records every call. */
  const ingest = (externalId: string, status: string) =>
    stack.http
      .put(`/api/internal/calls/${externalId}`)
      .set({ Authorization: `Bearer ${RUNTIME_TOKEN}` })
      .send({
        assistant_id: assistant,
        type: 'outbound',
        status,
        client_phone_number: '+14155550123',
        assistant_phone_number: '+14155550999',
      })
      .expect(201);
  const oldCalls = async () =>
    (
      await stack.dataSource.query(
        `SELECT count(*)::int AS old FROM calls WHERE user_id = $1 AND created_at < now() - interval '30 days'`,
        [account.id],
      )
    )[0].old as number;
  /** Every counter bucket's total next to a count of the rows themselves; they differ only where a total is wrong. */
  const counters = async () => {
    const [{ kept, counted }] = await stack.dataSource.query(
      `SELECT (SELECT jsonb_object_agg(bucket, total) FROM (
                 SELECT bucket, sum(total)::int AS total FROM call_counts WHERE user_id = $1
                  GROUP BY bucket HAVING sum(total) <> 0) kept) AS kept,
              (SELECT jsonb_object_agg(bucket, total) FROM (
                 SELECT bucket, count(*)::int AS total FROM calls,
                        unnest(call_count_buckets(status, type, assistant_id, campaign_id, created_at, analysis_success)) AS bucket
                  WHERE user_id = $1 GROUP BY bucket) counted) AS counted`,
      [account.id],
    );
    return { kept, counted };
  };

  const total = async (query: Record<string, string> = {}) =>
    (await stack.http.get('/api/user/calls').query(query).set(account.auth).expect(200)).body.total as number;

  it('removes calls past the retention on the worker, and the lists’ exact totals stay exact', async () => {
    const statuses = ['completed', 'completed', 'failed', 'completed', 'busy'];
    for (const [index, status] of statuses.entries()) await ingest(`retention-${account.id}-${index}`, status);
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

  it('never loses a call written while a run removes thousands, skips a call being written, and keeps every total exact', async () => {
    const before = await total();
    const seeded = 5_000;
    // In statements of 500: the count triggers update the same few counters once a row.
    for (let from = 0; from < seeded; from += 500) {
      await stack.dataSource.query(
        `INSERT INTO calls (user_id, external_id, assistant_id, assistant_name, type, status, client_phone_number,
                            assistant_phone_number, created_at, updated_at)
         SELECT $1::int, 'aged-' || $1::int || '-' || n, $2::int, 'Caller', 'outbound',
                (ARRAY['completed', 'busy', 'failed'])[1 + n % 3], '+14155550123', '+14155550999',
                now() - interval '45 days' + n * interval '1 second', now()
           FROM generate_series($3::int, $3::int + 499) n`,
        [account.id, assistant, from],
      );
    }
    expect(await total()).toBe(before + seeded);

    // An old call whose write is in flight holds its row (as a write after a lost race does) until it commits.
    const writing = stack.dataSource.createQueryRunner();
    await writing.startTransaction();
    try {
      await writing.query(`SELECT id FROM calls WHERE external_id = $1 FOR UPDATE`, [`aged-${account.id}-1`]);
      await stack.api.get(JobQueue).enqueue(Jobs.purgeOldCalls, {});
      await waitFor(async () => ((await oldCalls()) < seeded ? true : undefined), 15_000, 20);
      const fresh = Array.from({ length: 40 }, (_, index) => `during-${account.id}-${index}`);
      for (let start = 0; start < fresh.length; start += 8) {
        await Promise.all(
          fresh.slice(start, start + 8).map((id, index) => ingest(id, index % 2 ? 'busy' : 'completed')),
        );
      }
      // The run removes everything else without waiting for the held call.
      await waitFor(async () => ((await oldCalls()) === 1 ? true : undefined), 30_000);
      await writing.commitTransaction();
      const [{ kept }] = await stack.dataSource.query(
        `SELECT count(*)::int AS kept FROM calls WHERE external_id = ANY($1::text[])`,
        [fresh],
      );
      expect(kept).toBe(fresh.length);
    } finally {
      if (writing.isTransactionActive) await writing.rollbackTransaction();
      await writing.release();
    }

    // The next run takes the call it skipped.
    await stack.api.get(JobQueue).enqueue(Jobs.purgeOldCalls, {});
    await waitFor(async () => ((await oldCalls()) === 0 ? true : undefined), 15_000);
    expect(await total()).toBe(before + 40);
    const { kept: totals, counted } = await counters();
    expect(totals).toEqual(counted);
  }, 90_000);
});
