import { join } from 'node:path';
import { dropDatabase, ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { LocalRedisCluster } from './redis-cluster';
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
  // TEST_REDIS_CLUSTER=1 (`npm run test:cluster`): the run's queues and counters go to a Redis Cluster of its own.
  const cluster = process.env.TEST_REDIS_CLUSTER === '1' ? await LocalRedisCluster.start() : undefined;
  let stopRecording: (() => Promise<void>) | undefined;
  if (cluster) {
    // Every multi-key command of the run, for test/cluster/key-slots.e2e-spec.ts to check against the slots.
    const commandLog = join(cluster.directory, 'multi-key-commands.jsonl');
    stopRecording = await cluster.recordMultiKeyCommands(commandLog).catch(async (error: unknown) => {
      await cluster.stop();
      throw error;
    });
    console.log(`\nRedis Cluster of 3 masters and 3 replicas on ${cluster.seedNodes} (in ${cluster.directory}).`);
    Object.assign(process.env, {
      QUEUE_BACKEND: 'redis',
      REDIS_CLUSTER_NODES: cluster.seedNodes,
      TEST_REDIS_COMMAND_LOG: commandLog,
    });
  }
  const services = await localServices().catch(async (error: unknown) => {
    await stopRecording?.();
    await cluster?.stop();
    throw error;
  });
  if (services.line) console.log(`\n${services.line}`);
  Object.assign(process.env, services.env);
  // Read by the teardown, which stops what was started here.
  const stopServices = async () => {
    await stopRecording?.();
    await Promise.all([services.stop(), cluster?.stop()]);
  };
  (globalThis as { stopLocalServices?: () => Promise<void> }).stopLocalServices = stopServices;
  const name = uniqueRunName();
  const databaseUrl = databaseUrlFor(name);
  try {
    if (!(await ensureDatabase(databaseUrl))) {
      throw new Error(
        `Database ${name} already exists; refusing to use (and later drop) a database this run did not create`,
      );
    }
  } catch (error) {
    await stopServices();
    throw error;
  }
  process.env.TEST_DATABASE_URL = databaseUrl;
  process.env.TEST_QUEUE_PREFIX = name;
  try {
    await runMigrations(databaseUrl);
  } catch (error) {
    // Jest skips the teardown when the setup fails: drop what this run made before giving up.
    await dropDatabase(databaseUrl);
    await stopServices();
    throw error;
  }
}
