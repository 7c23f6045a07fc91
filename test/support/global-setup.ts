import { dropDatabase, ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { databaseUrlFor, uniqueRunName } from './test-environment';
// Plain JavaScript shared with `npm start`: the same fallbacks on a machine with nothing but Node and npm.
const { localServices } = require('../../scripts/local-services') as {
  localServices(): Promise<{ env: Record<string, string>; line?: string; stop(): Promise<void> }>;
};

/**
 * One fresh database and one Redis key prefix per test run; every e2e file shares them. Nothing else on the
 * server is touched: the teardown drops only this run's database and deletes only this run's keys. Without
 * DATABASE_URL and a PostgreSQL on 127.0.0.1:5432 the run uses the embedded PostgreSQL, and without a Redis the
 * postgres queue backend, as `npm start` does.
 */
export default async function globalSetup(): Promise<void> {
  const services = await localServices();
  if (services.line) console.log(`\n${services.line}`);
  Object.assign(process.env, services.env);
  // Read by the teardown, which stops what was started here.
  (globalThis as { stopLocalServices?: () => Promise<void> }).stopLocalServices = services.stop;
  const name = uniqueRunName();
  const databaseUrl = databaseUrlFor(name);
  try {
    if (!(await ensureDatabase(databaseUrl))) {
      throw new Error(
        `Database ${name} already exists; refusing to use (and later drop) a database this run did not create`,
      );
    }
  } catch (error) {
    await services.stop();
    throw error;
  }
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_QUEUE_PREFIX = name;
  try {
    await runMigrations(databaseUrl);
  } catch (error) {
    // Jest skips the teardown when the setup fails: drop what this run made before giving up.
    await dropDatabase(databaseUrl);
    await services.stop();
    throw error;
  }
}
