import { Client, escapeIdentifier } from 'pg';
import { ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { BASE_DATABASE_URL, TEST_DATABASE_PREFIX, databaseUrlFor, uniqueRunName } from './test-environment';

const STALE_AFTER_MS = 6 * 3600 * 1000;

/** Drops databases left by runs that crashed before their teardown (named with their start time). */
async function dropStaleDatabases(): Promise<void> {
  const url = new URL(BASE_DATABASE_URL);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${TEST_DATABASE_PREFIX}%`,
    ]);
    for (const { datname } of rows) {
      const startedAt = Number(datname.slice(TEST_DATABASE_PREFIX.length).split('_')[0]);
      if (Number.isFinite(startedAt) && Date.now() - startedAt > STALE_AFTER_MS) {
        await client.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(datname)} WITH (FORCE)`);
      }
    }
  } finally {
    await client.end();
  }
}

/** One fresh database and one Redis key prefix per test run; every e2e file shares them. */
export default async function globalSetup(): Promise<void> {
  await dropStaleDatabases();
  const name = uniqueRunName();
  const databaseUrl = databaseUrlFor(name);
  await ensureDatabase(databaseUrl);
  await runMigrations(databaseUrl);
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_QUEUE_PREFIX = name;
}
