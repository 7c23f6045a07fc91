/**
 * The API SIGKILLed after a create's commit and before its answer was kept under its Idempotency-Key, for every create
 * that takes a key, `ROUNDS` times (default 5, or the first argument), each create then retried with its key on a new
 * API process: every retry must answer the resource its dead attempt made (its status, as a replay, the one resource
 * there is). Counts the wrong answers. Runs against private Postgres and Redis servers; the API and the worker run
 * from the build (`npm run build`); the moment after the commit is held as `test/support/crash-creates.ts` says.
 *
 *   npm run fault:api-crashes [-- rounds]
 */
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import {
  type CrashableApi,
  crashCreates,
  crashDuring,
  holdCrashAnswers,
  releaseCrashAnswers,
  retryCreates,
  type WrongAnswer,
} from '../../test/support/crash-creates';
import { waitFor } from '../../test/support/wait-for';
import { fixed, printTable, runMain } from '../support/report';
import { ApiClient } from '../support/stack';
import { PrivatePostgres, PrivateRedis, ServiceProcess, freePort } from './support/services';

const ROUNDS = Number(process.argv[2] ?? 5);

async function main(): Promise<void> {
  const postgres = await PrivatePostgres.start();
  const redis = await PrivateRedis.start();
  const services: ServiceProcess[] = [];
  // One session holds the answer lock; the checks' reads, some at once, go through a pool.
  const database = new Client({ connectionString: postgres.url('voice_assistant') });
  const reads = new Pool({ connectionString: postgres.url('voice_assistant'), max: 4 });
  try {
    const databaseUrl = postgres.url('voice_assistant');
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    await database.connect();
    const env = {
      NODE_ENV: 'production',
      APP_URL: 'http://127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000',
      SHUTDOWN_DRAIN_SECONDS: '0',
    };
    const worker = new ServiceProcess('worker', { ...env, WORKER_PORT: String(await freePort()) });
    worker.start();
    services.push(worker);
    const startApi = async (): Promise<CrashableApi> => {
      const port = await freePort();
      const api = new ServiceProcess('api', { ...env, PORT: String(port) });
      api.start();
      services.push(api);
      const baseUrl = `http://127.0.0.1:${port}/api`;
      await waitFor(
        () =>
          fetch(`${baseUrl}/health/ready`).then(
            (response) => (response.ok ? true : undefined),
            () => undefined,
          ),
        120_000,
        100,
      );
      return { baseUrl, stop: () => api.kill('SIGKILL') };
    };

    let api = await startApi();
    const rows: string[][] = [];
    const wrong: WrongAnswer[] = [];
    let killed = 0;
    let answeredBeforeKill = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const started = Date.now();
      const client = await ApiClient.register(api.baseUrl.replace(/\/api$/, ''));
      const account = { id: client.userId, auth: { Authorization: `Bearer ${client.token}` } };
      const query = async (sql: string, parameters?: unknown[]) => (await reads.query(sql, parameters)).rows;
      const creates = await crashCreates(api, account, query, `round${round}`);
      await holdCrashAnswers(database);
      try {
        for (const batch of [creates.slice(0, 6), creates.slice(6)]) {
          const answered = await crashDuring(database, api, account, batch);
          killed++;
          answeredBeforeKill += answered.filter((answer) => answer !== 'no answer').length;
          api = await startApi();
        }
      } finally {
        await releaseCrashAnswers(database);
      }
      const retried = await retryCreates(api, account, creates);
      wrong.push(...retried.wrong);
      rows.push([
        String(round),
        String(creates.length),
        String(retried.wrong.length),
        `${fixed((Date.now() - started) / 1000)} s`,
      ]);
    }
    printTable(
      `Creates killed after their commit and retried with their Idempotency-Key (${ROUNDS} rounds, ${killed} API kills)`,
      ['round', 'creates killed and retried', 'wrong answers', 'took'],
      rows,
    );
    console.log(`answered before their kill (should be 0): ${answeredBeforeKill}`);
    for (const answer of wrong) console.log(`wrong: ${answer.kind}: ${answer.problem}`);
    if (wrong.length > 0 || answeredBeforeKill > 0) process.exitCode = 1;
  } finally {
    await database.end().catch(() => undefined);
    await reads.end().catch(() => undefined);
    await Promise.all(services.map((service) => service.kill('SIGKILL')));
    await redis.stop();
    await postgres.remove();
  }
}

runMain(main);
