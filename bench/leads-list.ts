/**
 * Lead lists at size: one account with 1,000,000 leads among 5,000,000, measured over HTTP (the first page, page
 * 1,000, and each single filter, with the exact `total` the envelope carries) against the built API in its own
 * process, next to the same SQL run bare through `pg` in the same run: every statement the API runs for the
 * request (the credential's lookup, then the page with its secondary contacts and the total side by side). Not a
 * timed test.
 *
 *   npm run bench:leads [-- requests per case]
 */
import { Client, Pool } from 'pg';
import {
  bareServerCases,
  LIST_CASE_HEADERS,
  type ListCase,
  measureListCases,
  type Statement,
} from './support/list-cases';
import { startBareListServer, startBuiltApi } from './support/processes';
import { ApiClient } from './support/stack';
import { fixed, nowMs, printTable, runMain } from './support/report';

const TOTAL_LEADS = 5_000_000;
const ACCOUNT_LEADS = 1_000_000;
const OTHER_ACCOUNTS = 4;

async function seed(
  client: Client,
  userId: number,
  assistantId: number,
): Promise<{ campaign: number; phone: string; from: string; to: string }> {
  const started = nowMs();
  const users: number[] = [userId];
  for (let index = 0; index < OTHER_ACCOUNTS; index++) {
    const [row] = (
      await client.query(`INSERT INTO users (name, email, password_hash) VALUES ('Other', $1, 'x') RETURNING id`, [
        `other-${index}@example.com`,
      ])
    ).rows;
    users.push(row.id);
  }
  // Ten campaigns each; the measured account's leads spread over them.
  const campaigns = new Map<number, number[]>();
  for (const user of users) {
    const { rows } = await client.query(
      `INSERT INTO campaigns (user_id, name, assistant_id, allowed_days)
       SELECT $1, 'Campaign ' || n, $2, '[]'::jsonb FROM generate_series(1, 10) n RETURNING id`,
      [user, user === userId ? assistantId : null],
    );
    campaigns.set(
      user,
      rows.map((row) => row.id),
    );
  }
  // Bulk load as an operator would: counters and secondary indexes are rebuilt once afterwards.
  await client.query(`ALTER TABLE leads DISABLE TRIGGER USER`);
  const indexes = (
    await client.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'leads' AND indexname <> 'leads_pkey'`)
  ).rows.map((row) => row.indexdef as string);
  for (const definition of indexes) await client.query(`DROP INDEX ${/INDEX (\S+) ON/.exec(definition)![1]}`);
  const perOther = (TOTAL_LEADS - ACCOUNT_LEADS) / OTHER_ACCOUNTS;
  const statuses = `(ARRAY['created','scheduled','processing','completed','rescheduled','reached-max-retries','blacklisted'])[1 + (n % 7)]`;
  for (const user of users) {
    const count = user === userId ? ACCOUNT_LEADS : perOther;
    const ids = campaigns.get(user)!;
    await client.query(
      `INSERT INTO leads (user_id, campaign_id, phone_number, status, created_at, updated_at)
       SELECT $1, ($2::int[])[1 + n % 10], '+1' || (2000000000 + n * 7 + $4)::text, ${statuses},
              timestamptz '2026-01-01' + (n * interval '5 seconds'), timestamptz '2026-01-01' + (n * interval '5 seconds')
         FROM generate_series(1, $3) n`,
      [user, ids, count, user],
    );
  }
  for (const definition of indexes) await client.query(definition);
  await client.query(`ALTER TABLE leads ENABLE TRIGGER USER`);
  await client.query(`DELETE FROM lead_counts`);
  await client.query(`
    INSERT INTO lead_counts (user_id, bucket, total)
    SELECT user_id, '', count(*) FROM leads GROUP BY user_id
    UNION ALL SELECT user_id, status, count(*) FROM leads GROUP BY user_id, status
    UNION ALL SELECT user_id, '#' || campaign_id, count(*) FROM leads GROUP BY user_id, campaign_id
    UNION ALL SELECT user_id, 'd' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), count(*) FROM leads GROUP BY 1, 2`);
  await client.query(`VACUUM ANALYZE leads`);
  await client.query(`VACUUM ANALYZE lead_counts`);
  console.log(
    `seeded ${TOTAL_LEADS} leads (${ACCOUNT_LEADS} for the measured account) in ${fixed((nowMs() - started) / 1000)} s`,
  );
  const [{ phone }] = (
    await client.query(
      `SELECT substring(phone_number, 4, 6) AS phone FROM leads WHERE user_id = $1 LIMIT 1 OFFSET 500000`,
      [userId],
    )
  ).rows;
  return { campaign: campaigns.get(userId)![3], phone, from: '2026-01-10', to: '2026-01-29' };
}

async function main(): Promise<void> {
  const samples = Number(process.argv[2] ?? 200);
  const stack = await startBuiltApi();
  const client = new Client({ connectionString: stack.databaseUrl });
  await client.connect();
  // The bare reference: two connections, as the API runs a page and its total at once.
  const bare = new Pool({ connectionString: stack.databaseUrl, max: 2 });
  try {
    const api = await ApiClient.register(stack.baseUrl);
    const me = await api.request('GET', '/api/user/me');
    const assistantId = await api.createOutboundAssistant();
    const data = await seed(client, me.data.id, assistantId);

    const user = me.data.id;
    // What the API runs for a page: the leads, each with its secondary contacts gathered around the page.
    const page = (offset: number, where = '', parameters: unknown[] = [], order = 'l.id DESC'): Statement => [
      `SELECT page.*,
                (SELECT COALESCE(json_agg(json_build_object('id', s.id, 'phone_number', s.phone_number,
                   'variables', s.variables, 'status', s.status, 'created_at', s.created_at,
                   'updated_at', s.updated_at) ORDER BY s.position), '[]')
                   FROM lead_secondary_contacts s WHERE s.lead_id = page.id) AS secondary_contacts
           FROM (SELECT l.id, l.campaign_id, c.name AS campaign_name, l.phone_number, l.variables, l.status,
                        l.created_at, l.updated_at
                   FROM leads l JOIN campaigns c ON c.id = l.campaign_id WHERE l.user_id = $1 ${where}
                  ORDER BY ${order} LIMIT 15 OFFSET ${offset}) page
          ORDER BY ${order.replaceAll('l.', 'page.')}`,
      [user, ...parameters],
    ];
    // As SqlFilter.numberContaining writes it: the account's own number index finds the candidates, LIKE decides.
    const numberFilter =
      'AND l.phone_number LIKE $2 AND account_number_trigrams(l.user_id, l.phone_number) @> account_number_trigrams($1::int, $3::text)';
    const cases: ListCase[] = [
      {
        name: 'first page',
        query: '',
        sql: [page(0), [`SELECT total FROM lead_counts WHERE user_id = $1 AND bucket = ''`, [user]]],
      },
      {
        name: 'page 1,000',
        query: 'page=1000',
        sql: [page(14985), [`SELECT total FROM lead_counts WHERE user_id = $1 AND bucket = ''`, [user]]],
      },
      {
        name: 'status',
        query: 'status=completed',
        sql: [
          page(0, 'AND l.status = $2', ['completed']),
          [`SELECT total FROM lead_counts WHERE user_id = $1 AND bucket = 'completed'`, [user]],
        ],
      },
      {
        name: 'campaign',
        query: `campaign_id=${data.campaign}`,
        sql: [
          page(0, 'AND l.campaign_id = $2', [data.campaign]),
          [`SELECT total FROM lead_counts WHERE user_id = $1 AND bucket = $2`, [user, `#${data.campaign}`]],
        ],
      },
      {
        name: 'phone number (partial)',
        query: `phone_number=${data.phone}`,
        sql: [
          page(0, numberFilter, [`%${data.phone}%`, data.phone]),
          [`SELECT count(*) FROM leads l WHERE l.user_id = $1 ${numberFilter}`, [user, `%${data.phone}%`, data.phone]],
        ],
      },
      {
        name: '20-day range',
        query: `date_from=${data.from}&date_to=${data.to}`,
        sql: [
          page(
            0,
            `AND l.created_at >= $2::date AND l.created_at < $3::date + 1`,
            [data.from, data.to],
            'l.created_at DESC, l.id DESC',
          ),
          [
            `SELECT COALESCE(sum(total), 0)::int AS total FROM lead_counts
              WHERE user_id = $1 AND bucket LIKE 'd%' AND bucket >= $2 AND bucket <= $3`,
            [user, `d${data.from}`, `d${data.to}`],
          ],
        ],
      },
    ];
    const bareHttp = await startBareListServer(stack.databaseUrl, {
      LIST_CASES: bareServerCases('/api/user/leads', cases),
      QUEUE_PREFIX: stack.queuePrefix,
      REDIS_URL: stack.redisUrl,
    });
    const results = await measureListCases(api, bare, '/api/user/leads', cases, samples, bareHttp.baseUrl).finally(() =>
      bareHttp.process.stop(),
    );
    printTable(
      `GET /api/user/leads, one account with 1,000,000 of 5,000,000 leads (${samples} requests a case, sequential)`,
      LIST_CASE_HEADERS,
      results,
    );
  } finally {
    await client.end();
    await bare.end();
    await stack.close();
  }
}

runMain(main);
