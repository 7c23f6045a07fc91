import { Client } from 'pg';
import { nowMs } from './report';

export interface SeededCalls {
  /** The accounts seeded, the measured one first. */
  users: number[];
  rowsSeconds: number;
  indexesSeconds: number;
  seconds: number;
}

/**
 * Seeds `perAccount` calls for the measured account and for `accounts - 1` others, 5 s apart from 2026-01-01 on, as
 * an operator bulk-loads: triggers off and secondary indexes dropped, rows from `generate_series` two accounts at a
 * time (one a core), the indexes rebuilt with more memory and both cores, the counters computed once.
 */
export async function seedCalls(
  databaseUrl: string,
  options: { accountId: number; assistantId: number; accounts: number; perAccount: number },
): Promise<SeededCalls> {
  const client = new Client({ connectionString: databaseUrl });
  const seeder = new Client({ connectionString: databaseUrl });
  await Promise.all([client.connect(), seeder.connect()]);
  try {
    const started = nowMs();
    await client.query(`ALTER TABLE calls DISABLE TRIGGER USER`);
    const indexes = (
      await client.query(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'calls' AND indexname NOT IN ('calls_pkey', 'calls_external_id_key')`,
      )
    ).rows;
    for (const index of indexes) await client.query(`DROP INDEX ${index.indexname}`);
    const users = [options.accountId];
    for (let index = 1; index < options.accounts; index++) {
      users.push(
        (
          await client.query(`INSERT INTO users (name, email, password_hash) VALUES ('Other', $1, 'x') RETURNING id`, [
            `calls-${index}@example.com`,
          ])
        ).rows[0].id,
      );
    }
    const queue = [...users];
    const seedAccount = (connection: Client, user: number) =>
      connection.query(
        `INSERT INTO calls (user_id, external_id, assistant_id, assistant_name, campaign_id, type, status, client_phone_number,
                            assistant_phone_number, duration, created_at, updated_at)
         SELECT $1::int, 'seed-' || $1::int || '-' || n, CASE WHEN $1::int = $3::int THEN $4::int ELSE NULL END, 'Caller', NULL,
                (ARRAY['inbound','outbound','web'])[1 + n % 3],
                (ARRAY['completed','busy','no-answer','failed','ended','ended_by_customer','ended_by_assistant'])[1 + n % 7],
                '+1' || (3000000000 + n * 7 + $1::int)::text, '+14155550999', n % 600,
                timestamptz '2026-01-01' + n * interval '5 seconds', timestamptz '2026-01-01' + n * interval '5 seconds'
           FROM generate_series(1, $2) n`,
        [user, options.perAccount, options.accountId, options.assistantId],
      );
    const seedAccounts = async (connection: Client) => {
      for (let user = queue.shift(); user !== undefined; user = queue.shift()) await seedAccount(connection, user);
    };
    await Promise.all([seedAccounts(client), seedAccounts(seeder)]);
    const inserted = nowMs();
    await client.query(`SET maintenance_work_mem = '1GB'`);
    await client.query(`SET max_parallel_maintenance_workers = 2`);
    for (const index of indexes) await client.query(index.indexdef);
    const indexed = nowMs();
    await client.query(`ALTER TABLE calls ENABLE TRIGGER USER`);
    await client.query(`DELETE FROM call_counts`);
    await client.query(`
      INSERT INTO call_counts (user_id, bucket, shard, total)
      SELECT user_id, bucket, 0, count(*) FROM calls,
             unnest(call_count_buckets(status, type, assistant_id, campaign_id, created_at, analysis_success)) AS bucket
       GROUP BY user_id, bucket`);
    await client.query(`DELETE FROM call_usage_daily`);
    await client.query(`
      INSERT INTO call_usage_daily (user_id, day, shard, calls, seconds)
      SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, 0, count(*), sum(duration) FROM calls GROUP BY 1, 2`);
    await client.query(`VACUUM ANALYZE calls`);
    await client.query(`VACUUM ANALYZE call_counts`);
    return {
      users,
      rowsSeconds: (inserted - started) / 1000,
      indexesSeconds: (indexed - inserted) / 1000,
      seconds: (nowMs() - started) / 1000,
    };
  } finally {
    await Promise.all([client.end(), seeder.end()]);
  }
}
