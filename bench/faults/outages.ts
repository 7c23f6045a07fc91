/**
 * Dependency outages under load, against private Postgres and Redis servers (nothing shared is touched):
 *   1. Redis stopped for 10 s and started again (empty, as after a restart without persistence) while
 *      documents are being created and their list read;
 *   2. Postgres crashed (immediate stop) for 10 s and started again under the same load;
 *   3. Redis hung for 10 s (SIGSTOP, then SIGCONT): its connections stay open and nothing is answered;
 *   4. Postgres hung the same way (every process of the server).
 * The API and a worker run from the build (`npm run build` first), as operators run them, with the default bounds on
 * Postgres and Redis. For each outage it reports how fast the API answered while the dependency was down (every
 * request within its bound), that no answered-503 request left a row and
 * every accepted document finished, how long the processes took to recover on their own, and any log line that
 * was not JSON.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/faults/outages.ts
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { ensureDatabase, runMigrations } from '../../libs/database/src/data-source-options';
import { fixed, percentile, printTable, runMain } from '../support/report';
import { PrivatePostgres, PrivateRedis, ServiceProcess, freePort } from './support/services';

interface Attempt {
  name: string;
  startedAt: number;
  ms: number;
  status: number;
  documentId?: number;
}

async function post(url: string, token: string, body: FormData | object): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }),
    },
    body: body instanceof FormData ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  }).catch(() => undefined);
  if (!response) return { status: 0, json: undefined };
  return { status: response.status, json: await response.json().catch(() => undefined) };
}

/** A read's status, or 0 when no answer came (a reset connection, or 30 s without one). */
async function get(url: string, token: string): Promise<number> {
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  }).catch(() => undefined);
  await response?.arrayBuffer().catch(() => undefined);
  return response?.status ?? 0;
}

async function ready(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
  return response?.status === 200;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check()) return Date.now() - started;
    await sleep(100);
  }
  return undefined;
}

/**
 * The longest a request may take while a dependency hangs, with the default bounds (docs/configuration.md): on
 * Redis, a create's rate-limit command and its enqueue's, one REDIS_COMMAND_TIMEOUT_MS each; on Postgres, a wait for a
 * connection (DATABASE_CONNECT_TIMEOUT_MS) and a statement (DATABASE_STATEMENT_TIMEOUT_MS). Plus 1.5 s for the rest of
 * the request on a busy machine (the shared 2 cores run at load average 4-5). A dependency that is gone refuses at
 * once: 5 s is already generous.
 */
const REST_OF_REQUEST_MS = 1_500;
const ANSWER_BOUND_MS = {
  killed: 5_000,
  redisHung: 2 * 1_000 + REST_OF_REQUEST_MS,
  postgresHung: 5_000 + 10_000 + REST_OF_REQUEST_MS,
};

async function scenario(
  name: string,
  outage: { stop(): Promise<void> | void; start(): Promise<void> | void },
  env: Environment,
  boundMs: number,
) {
  const attempts: Attempt[] = [];
  const started = Date.now();
  let stoppedAt = 0;
  let restartedAt = 0;
  const load = (async () => {
    let index = 0;
    while (Date.now() - started < 28_000) {
      const documentName = `${name}-${index++}`;
      const form = new FormData();
      form.set('name', documentName);
      form.set('type', 'txt');
      form.set('file', new Blob([`Document ${documentName}: open nine to five.`]), `${documentName}.txt`);
      const begin = Date.now();
      const answer = await post(`${env.api}/api/user/knowledgebases/${env.knowledgebase}/documents`, env.token, form);
      attempts.push({
        name: documentName,
        startedAt: begin,
        ms: Date.now() - begin,
        status: answer.status,
        documentId: answer.json?.data?.id,
      });
      await sleep(100);
    }
  })();
  // Beside the creates, which wait for each other, a list read every 250 ms whatever the earlier ones are doing: while
  // a dependency hangs, requests keep arriving and must not pile up behind the ones it holds.
  const reads: Omit<Attempt, 'name'>[] = [];
  const readsInFlight: Promise<void>[] = [];
  const readLoad = (async () => {
    while (Date.now() - started < 28_000) {
      const begin = Date.now();
      readsInFlight.push(
        get(`${env.api}/api/user/knowledgebases/${env.knowledgebase}/documents`, env.token).then((status) => {
          reads.push({ startedAt: begin, ms: Date.now() - begin, status });
        }),
      );
      await sleep(250);
    }
  })();
  await sleep(3_000);
  stoppedAt = Date.now();
  await outage.stop();
  await sleep(10_000);
  await outage.start();
  restartedAt = Date.now();
  const apiBack = await waitUntil(() => ready(`${env.api}/api/health/ready`), 60_000);
  const workerBack = await waitUntil(() => ready(`${env.worker}/api/health/ready`), 60_000);
  await load;
  await readLoad;
  await Promise.all(readsInFlight);

  const inOutage = (attempt: { startedAt: number }) => attempt.startedAt >= stoppedAt && attempt.startedAt < restartedAt;
  const during = attempts.filter(inOutage);
  const readsDuring = reads.filter(inOutage);
  const firstSuccessAfter = attempts.find((attempt) => attempt.startedAt >= restartedAt && attempt.status === 201);
  const accepted = attempts.filter((attempt) => attempt.status === 201);
  const refused = attempts.filter((attempt) => attempt.status !== 201);

  const database = new Client({ connectionString: env.databaseUrl });
  await database.connect();
  let settledIn: number | undefined;
  let states: Record<string, number>;
  let orphans: number;
  try {
    settledIn = await waitUntil(async () => {
      const { rows } = await database.query(
        `SELECT count(*)::int AS n FROM documents WHERE knowledgebase_id = $1 AND name LIKE $2 AND status = 'processing'`,
        [env.knowledgebase, `${name}-%`],
      );
      return rows[0].n === 0;
    }, 120_000);
    const { rows } = await database.query(
      `SELECT status, count(*)::int AS n FROM documents WHERE knowledgebase_id = $1 AND name LIKE $2 GROUP BY status`,
      [env.knowledgebase, `${name}-%`],
    );
    states = Object.fromEntries(rows.map((row) => [row.status, row.n]));
    const names = refused.map((attempt) => attempt.name);
    orphans = (await database.query(`SELECT count(*)::int AS n FROM documents WHERE name = ANY($1)`, [names])).rows[0]
      .n;
  } finally {
    await database.end();
  }
  /** How many requests, their statuses, and their p50 and max latency. */
  const summary = (some: { status: number; ms: number }[]) => ({
    count: some.length,
    statuses: Object.entries(
      some.reduce<Record<number, number>>((counts, attempt) => {
        counts[attempt.status] = (counts[attempt.status] ?? 0) + 1;
        return counts;
      }, {}),
    )
      .map(([status, count]) => `${status}: ${count}`)
      .join(', '),
    p50: percentile(
      some.map((attempt) => attempt.ms),
      50,
    ),
    max: Math.max(0, ...some.map((attempt) => attempt.ms)),
  });
  return {
    name,
    boundMs,
    requests: attempts.length,
    creates: summary(during),
    reads: summary(readsDuring),
    // Every request of the run, creates and reads, the ones the outage caught in flight too.
    slowest: Math.max(0, ...[...attempts, ...reads].map((attempt) => attempt.ms)),
    accepted: accepted.length,
    states: Object.entries(states)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', '),
    acceptedMissing: accepted.length - Object.values(states).reduce((sum, count) => sum + count, 0) + orphans,
    orphans,
    apiBackMs: apiBack,
    workerBackMs: workerBack,
    firstSuccessMs: firstSuccessAfter ? firstSuccessAfter.startedAt - restartedAt : undefined,
    settledMs: settledIn,
  };
}

interface Environment {
  api: string;
  worker: string;
  token: string;
  knowledgebase: number;
  databaseUrl: string;
}

async function main(): Promise<void> {
  const postgres = await PrivatePostgres.start();
  const redis = await PrivateRedis.start();
  const services: ServiceProcess[] = [];
  try {
    const databaseUrl = postgres.url('voice_assistant');
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    const env = {
      NODE_ENV: 'production',
      APP_URL: 'http://127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '100000',
      SHUTDOWN_DRAIN_SECONDS: '0',
      METRICS_PORT: '0',
      DOCUMENT_STUCK_AFTER_SECONDS: '10',
      DOCUMENT_SWEEP_INTERVAL_SECONDS: '2',
      JOB_RETRY_DELAY_MS: '500',
    };
    const api = new ServiceProcess('api', { ...env, PORT: String(apiPort) });
    const worker = new ServiceProcess('worker', { ...env, WORKER_PORT: String(workerPort) });
    services.push(api, worker);
    api.start();
    worker.start();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const workerUrl = `http://127.0.0.1:${workerPort}`;
    if ((await waitUntil(() => ready(`${apiUrl}/api/health/ready`), 60_000)) === undefined)
      throw new Error('API did not start');
    if ((await waitUntil(() => ready(`${workerUrl}/api/health/ready`), 60_000)) === undefined)
      throw new Error('worker did not start');
    const registered = await post(`${apiUrl}/api/auth/register`, '', {
      name: 'Faults',
      email: `faults-${randomBytes(4).toString('hex')}@example.com`,
      password: 'correct horse battery staple',
    });
    const token: string = registered.json.token;
    const knowledgebase: number = (await post(`${apiUrl}/api/user/knowledgebases`, token, { name: 'Outages' })).json
      .data.id;
    const environment: Environment = { api: apiUrl, worker: workerUrl, token, knowledgebase, databaseUrl };

    const outages = [
      { name: 'redis', stop: () => redis.stop(), start: () => redis.resume(), bound: ANSWER_BOUND_MS.killed },
      { name: 'postgres', stop: () => postgres.halt(), start: () => postgres.resume(), bound: ANSWER_BOUND_MS.killed },
      { name: 'redis (hung)', stop: () => redis.freeze(), start: () => redis.thaw(), bound: ANSWER_BOUND_MS.redisHung },
      {
        name: 'postgres (hung)',
        stop: () => postgres.freeze(),
        start: () => postgres.thaw(),
        bound: ANSWER_BOUND_MS.postgresHung,
      },
    ];
    const results = [];
    for (const outage of outages) results.push(await scenario(outage.name, outage, environment, outage.bound));
    console.log(`load average at the end: ${loadavg().map((value) => value.toFixed(2)).join(', ')}`);
    printTable(
      'Outages of 10 s under load (one create request every ~100 ms, and a list read every 250 ms)',
      [
        'dependency',
        'bound ms',
        'requests',
        'during outage',
        'answers then',
        'p50 ms',
        'max ms',
        'reads during outage',
        'read answers then',
        'read p50 ms',
        'read max ms',
        'slowest of the run ms',
        'accepted',
        'final states',
        'lost',
        'orphans',
        'API ready after',
        'worker ready after',
        'first 201 after',
        'all settled after',
      ],
      results.map((result) => [
        result.name,
        result.boundMs,
        result.requests,
        ...[result.creates, result.reads].flatMap((some) => [some.count, some.statuses, fixed(some.p50, 0), some.max]),
        result.slowest,
        result.accepted,
        result.states,
        result.acceptedMissing,
        result.orphans,
        result.apiBackMs === undefined ? 'never' : `${fixed(result.apiBackMs / 1000)} s`,
        result.workerBackMs === undefined ? 'never' : `${fixed(result.workerBackMs / 1000)} s`,
        result.firstSuccessMs === undefined ? 'never' : `${fixed(result.firstSuccessMs / 1000)} s`,
        result.settledMs === undefined ? 'never' : `${fixed(result.settledMs / 1000)} s`,
      ]),
    );
    const notJson = services.flatMap((service) =>
      service.output
        .map((line) => `${service.name}: ${line}`)
        .filter((line) => {
          try {
            JSON.parse(line.slice(line.indexOf(': ') + 2));
            return false;
          } catch {
            return true;
          }
        }),
    );
    console.log(
      `\nlog lines: ${services.reduce((sum, service) => sum + service.output.length, 0)}, not JSON: ${notJson.length}`,
    );
    for (const line of notJson.slice(0, 10)) console.log(`  ${line.slice(0, 160)}`);
    const failed = results.some(
      (result) =>
        result.acceptedMissing !== 0 ||
        result.orphans !== 0 ||
        result.settledMs === undefined ||
        result.apiBackMs === undefined ||
        result.workerBackMs === undefined ||
        result.slowest > result.boundMs,
    );
    if (failed) process.exitCode = 1;
  } finally {
    await Promise.all(services.map((service) => service.kill('SIGKILL')));
    await redis.stop();
    await postgres.remove();
  }
}

runMain(main);
