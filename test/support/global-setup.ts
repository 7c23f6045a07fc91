import { dropDatabase, ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { databaseUrlFor, uniqueRunName } from './test-environment';

/**
 * One fresh database and one Redis key prefix per test run; every e2e file shares them. Nothing else on the
 * server is touched: the teardown drops only this run's database and deletes only this run's keys.
 */
export default async function globalSetup(): Promise<void> {
  const name = uniqueRunName();
  const databaseUrl = databaseUrlFor(name);
  if (!(await ensureDatabase(databaseUrl))) {
    throw new Error(
      `Database ${name} already exists; refusing to use (and later drop) a database this run did not create`,
    );
  }
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_QUEUE_PREFIX = name;
  try {
    await runMigrations(databaseUrl);
  } catch (error) {
    // Jest skips the teardown when the setup fails: drop what this run made before giving up.
    await dropDatabase(databaseUrl);
    throw error;
  }
}
