/**
 * Call lists at a million rows (not a timed test): one account with 1,000,000 calls among 5,000,000, over HTTP
 * next to the same SQL run bare as the API runs it (see
 * support/list-cases.ts). Ingestion and webhook delivery are measured by bench/call-ingestion.ts.
 *
 *   npm run bench:calls
 */
import { Client, Pool } from 'pg';
import { bareServerCases, LIST_CASE_HEADERS, ListCase, measureListCases } from './support/list-cases';
import { startBareListServer, startBuiltApi } from './support/processes';
import { ApiClient } from './support/stack';
import { fixed, nowMs, printTable, runMain } from './support/report';

const TOTAL_CALLS = 5_000_000;
const ACCOUNT_CALLS = 1_000_000;

async function main(): Promise<void> {
  const stack = await startBuiltApi();
  const client = new Client({ connectionString: stack.databaseUrl });
  await client.connect();
  // The bare reference: two connections, as the API runs a page and its total at once.
  const bare = new Pool({ connectionString: stack.databaseUrl, max: 2 });
  try {
    const api = await ApiClient.register(stack.baseUrl);
    const me = await api.request('GET', '/api/user/me');
    const assistantId = await api.createOutboundAssistant();

    const seeded = nowMs();
    await client.query(`ALTER TABLE calls DISABLE TRIGGER USER`);
    const indexes = (
      await client.query(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'calls' AND indexname NOT IN ('calls_pkey', 'calls_external_id_key')`,
      )
    ).rows;
    for (const index of indexes) await client.query(`DROP INDEX ${index.indexname}`);
    const users = [me.data.id];
    for (let index = 0; index < 4; index++) {
      users.push(
        (
          await client.query(`INSERT INTO users (name, email, password_hash) VALUES ('Other', $1, 'x') RETURNING id`, [
            `calls-${index}@example.com`,
          ])
        ).rows[0].id,
      );
    }
    for (const user of users) {
      const count = user === me.data.id ? ACCOUNT_CALLS : (TOTAL_CALLS - ACCOUNT_CALLS) / 4;
      await client.query(
        `INSERT INTO calls (user_id, external_id, assistant_id, assistant_name, campaign_id, type, status, client_phone_number,
                            assistant_phone_number, duration, created_at, updated_at)
         SELECT $1::int, 'seed-' || $1::int || '-' || n, CASE WHEN $1::int = $3::int THEN $4::int ELSE NULL END, 'Caller', NULL,
                (ARRAY['inbound','outbound','web'])[1 + n % 3],
                (ARRAY['completed','busy','no-answer','failed','ended','ended_by_customer','ended_by_assistant'])[1 + n % 7],
                '+1' || (3000000000 + n * 7 + $1::int)::text, '+14155550999', n % 600,
                timestamptz '2026-01-01' + n * interval '5 seconds', timestamptz '2026-01-01' + n * interval '5 seconds'
           FROM generate_series(1, $2) n`,
        [user, count, me.data.id, assistantId],
      );
    }
    for (const index of indexes) await client.query(index.indexdef);
    await client.query(`ALTER TABLE calls ENABLE TRIGGER USER`);
    await client.query(`DELETE FROM call_counts`);
    await client.query(`
      INSERT INTO call_counts (user_id, bucket, shard, total)
      SELECT user_id, b, 0, count(*) FROM calls,
             unnest(ARRAY['', 's:' || status, 't:' || type,
                          CASE WHEN assistant_id IS NULL THEN NULL ELSE 'a:' || assistant_id END,
                          'd:' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')]) AS b
       WHERE b IS NOT NULL GROUP BY user_id, b`);
    await client.query(`VACUUM ANALYZE calls`);
    await client.query(`VACUUM ANALYZE call_counts`);
    console.log(`seeded ${TOTAL_CALLS} calls in ${fixed((nowMs() - seeded) / 1000)} s`);
    const [{ phone }] = (
      await client.query(
        `SELECT substring(client_phone_number, 4, 6) AS phone FROM calls WHERE user_id = $1 AND external_id LIKE 'seed-%' LIMIT 1 OFFSET 500000`,
        [me.data.id],
      )
    ).rows;
    const user = me.data.id;
    const page = (where = '', values: unknown[] = [], order = 'id DESC', offset = 0): [string, unknown[]] => [
      `SELECT * FROM calls WHERE user_id = $1 ${where} ORDER BY ${order} LIMIT 15 OFFSET ${offset}`,
      [user, ...values],
    ];
    const counter = (bucket: string): [string, unknown[]] => [
      `SELECT sum(total) FROM call_counts WHERE user_id = $1 AND bucket = $2`,
      [user, bucket],
    ];
    const cases: ListCase[] = [
      { name: 'first page', query: '', sql: [page(), counter('')] },
      { name: 'page 1,000', query: 'page=1000', sql: [page('', [], 'id DESC', 14985), counter('')] },
      { name: 'status', query: 'status=busy', sql: [page('AND status = $2', ['busy']), counter('s:busy')] },
      { name: 'type', query: 'type=web', sql: [page('AND type = $2', ['web']), counter('t:web')] },
      {
        name: 'assistant',
        query: `assistant_id=${assistantId}`,
        sql: [page('AND assistant_id = $2', [assistantId]), counter(`a:${assistantId}`)],
      },
      {
        name: 'campaign (none match)',
        query: 'campaign_id=1',
        sql: [page('AND campaign_id = $2', [1]), counter('c:1')],
      },
      {
        name: '20-day range',
        query: 'date_from=2026-01-10&date_to=2026-01-29',
        sql: [
          page(
            'AND created_at >= $2::date AND created_at < $3::date + 1',
            ['2026-01-10', '2026-01-29'],
            'created_at DESC, id DESC',
          ),
          [
            `SELECT sum(total) FROM call_counts WHERE user_id = $1 AND bucket LIKE 'd:%' AND bucket >= $2 AND bucket <= $3`,
            [user, 'd:2026-01-10', 'd:2026-01-29'],
          ],
        ],
      },
      {
        name: 'client number (partial)',
        query: `phone_number=${phone}`,
        sql: [
          page('AND client_phone_number LIKE $2', [`%${phone}%`]),
          [`SELECT count(*) FROM calls WHERE user_id = $1 AND client_phone_number LIKE $2`, [user, `%${phone}%`]],
        ],
      },
    ];
    const samples = Number(process.argv[2] ?? 200);
    const bareHttp = await startBareListServer(stack.databaseUrl, {
      LIST_CASES: bareServerCases('/api/user/calls', cases),
      QUEUE_PREFIX: stack.queuePrefix,
    });
    const rows = await measureListCases(api, bare, '/api/user/calls', cases, samples, bareHttp.baseUrl).finally(() =>
      bareHttp.process.stop(),
    );
    printTable(
      `GET /api/user/calls, one account with 1,000,000 of 5,000,000 calls (${samples} requests a case, sequential)`,
      LIST_CASE_HEADERS,
      rows,
    );
  } finally {
    await client.end();
    await bare.end();
    await stack.close();
  }
}

runMain(main);
