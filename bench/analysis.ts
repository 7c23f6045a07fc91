/**
 * Post-call analysis throughput: calls analysed per minute by one worker process against the strict OpenAI fake with
 * the provider's latency simulated (each answer waits that long), at the default concurrencies (WORKER_CONCURRENCY
 * and LLM_CONCURRENCY 4) and at 16. Calls of 40 turns (about 3 KB) are written ended and pending, their jobs queued at
 * once, and the clock runs until every analysis has settled; each must be `done`, analysed once (one request each).
 * Then the usage read at scale: `GET /api/user/usage` over a year, with the daily counters of 20,000,000 calls
 * (1,000 accounts, a year of days, every shard) beside it; what the usage trigger adds to a call's insert; and the
 * migration's count of the calls already stored, at 1,000,000 calls.
 *
 *   npm run bench:analysis [-- calls latencyMs...]     (default: 400 calls, latencies 500 and 2000 ms)
 *   BENCH_USAGE=0 leaves the usage part out, BENCH_THROUGHPUT=0 the throughput
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { PENDING_ANALYSIS } from '@app/contracts';
import { JobQueue, Jobs } from '@app/jobs';
import { FakeOpenAi } from '../test/support/openai.fake';
import { processCpuMs } from './support/http-load';
import { waitWhileProgressing } from '../test/support/wait-for';
import { freePort, startServer } from './support/processes';
import { fixed, median, nowMs, percentile, printTable, runMain } from './support/report';
import { ApiClient, type BenchStack, startBenchStack } from './support/stack';

const TURN = (index: number) =>
  index % 2
    ? `Customer: I would like to move my appointment ${index} to Thursday afternoon if that is possible, thanks.`
    : `Assistant: Of course, let me check the calendar for Thursday afternoon; one moment please, number ${index}.`;
const TRANSCRIPT = Array.from({ length: 40 }, (_, index) => TURN(index)).join('\n');

/** A worker process of its own, from the sources, so its CPU is the worker's alone (the fake and the API live here). */
async function startWorker(stack: BenchStack, settings: Record<string, string>) {
  const port = await freePort();
  const worker = startServer(
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/worker/src/main.ts'],
    {
      ...settings,
      NODE_ENV: 'test',
      WORKER_PORT: String(port),
      METRICS_PORT: '0',
      DATABASE_URL: stack.config.databaseUrl,
      REDIS_URL: stack.config.redisUrl,
      QUEUE_PREFIX: stack.config.queuePrefix,
      ENCRYPTION_KEY: stack.config.encryptionKey.toString('base64'),
      LOG_LEVEL: 'warn',
    },
  );
  // Compiling the sources on a loaded machine takes a while: as long as the process works at it (its CPU advances).
  const ready = async () =>
    fetch(`http://127.0.0.1:${port}/api/health/ready`).then(
      (response) => (response.status === 200 ? true : undefined),
      () => undefined,
    );
  await waitWhileProgressing(
    async () => {
      if (worker.child.exitCode !== null) throw new Error('the worker exited before it was ready');
      return ready();
    },
    () => processCpuMs(worker.child.pid!),
    30_000,
  ).catch(async (error: unknown) => {
    await worker.stop();
    throw error;
  });
  return { cpuMs: () => processCpuMs(worker.child.pid!), stop: worker.stop };
}

async function throughput(
  stack: BenchStack,
  fake: FakeOpenAi,
  llm: Record<string, string>,
  calls: number,
  latencyMs: number,
  concurrency: number,
): Promise<(string | number)[]> {
  const database = stack.api.get(DataSource);
  const api = await ApiClient.register(stack.baseUrl);
  const assistantId = await api.createOutboundAssistant({
    post_call_schema: [
      { name: 'new_day', type: 'enum', description: 'The day asked for', values: ['monday', 'thursday', 'friday'] },
      { name: 'moved', type: 'boolean', description: 'Whether it was moved' },
    ],
  });
  const worker = await startWorker(stack, {
    ...llm,
    WORKER_CONCURRENCY: String(concurrency),
    LLM_CONCURRENCY: String(concurrency),
  });
  try {
    fake.latencyMs = latencyMs;
    const before = fake.requestsTo('/v1/chat/completions').length;
    const ids = (
      (await database.query(
        `INSERT INTO calls (user_id, external_id, assistant_id, assistant_name, type, status, client_phone_number,
                            assistant_phone_number, duration, transcript, ended_at, analysis, analysis_run,
                            analysis_changed_at)
         SELECT $1, 'bench-' || $2 || '-' || n, $3, 'Caller', 'outbound', 'completed', '+14155550123',
                '+14155550100', 120, $4, now(), $5, 1, now()
           FROM generate_series(1, $6) AS n RETURNING id`,
        [api.userId, `${latencyMs}-${concurrency}`, assistantId, TRANSCRIPT, JSON.stringify(PENDING_ANALYSIS), calls],
      )) as { id: number }[]
    ).map((row) => row.id);
    const cpuBefore = worker.cpuMs();
    const started = nowMs();
    const startedAt = Date.now();
    const jobs = stack.api.get(JobQueue);
    // Queued 20 at a time, as ended calls arrive: a burst of hundreds of enqueues at once is no call's pattern.
    for (let start = 0; start < ids.length; start += 20)
      await Promise.all(
        ids.slice(start, start + 20).map((callId) => jobs.enqueue(Jobs.analyzeCall, { callId, run: 1 })),
      );
    for (;;) {
      const [{ left }] = await database.query(
        `SELECT count(*)::int AS left FROM calls WHERE id = ANY($1) AND analysis->>'status' = 'pending'`,
        [ids],
      );
      if (left === 0) break;
      await sleep(100);
    }
    const seconds = (nowMs() - started) / 1000;
    const cpuSeconds = (worker.cpuMs() - cpuBefore) / 1000;
    const settled = (await database.query(
      `SELECT analysis->>'status' AS status,
              extract(epoch FROM (analysis->>'analyzed_at')::timestamptz) * 1000 AS analyzed
         FROM calls WHERE id = ANY($1)`,
      [ids],
    )) as { status: string; analyzed: string }[];
    const done = settled.filter((row) => row.status === 'done').length;
    const requests = fake.requestsTo('/v1/chat/completions').length - before;
    const waits = settled.map((row) => Number(row.analyzed) - startedAt);
    if (done !== calls || requests !== calls) process.exitCode = 1;
    return [
      `${latencyMs} ms`,
      concurrency,
      calls,
      `${fixed(seconds)} s`,
      fixed((calls / seconds) * 60, 0),
      fixed(((concurrency * 1000) / latencyMs) * 60, 0),
      `${fixed(median(waits) / 1000)} s`,
      `${fixed(percentile(waits, 95) / 1000)} s`,
      `${fixed((cpuSeconds * 1000) / calls)} ms`,
      `${done} done, ${requests} requests`,
    ];
  } finally {
    await worker.stop();
  }
}

/** The usage route over a year beside the daily counters of 20,000,000 calls; the trigger's cost; the backfill. */
async function usageAtScale(stack: BenchStack): Promise<void> {
  const api = await ApiClient.register(stack.baseUrl);
  // Its own connection: the API's statements are bounded by DATABASE_STATEMENT_TIMEOUT_MS, the seeding is not.
  const client = new Client({ connectionString: stack.config.databaseUrl });
  await client.connect();
  const database = { query: async (sql: string, values?: unknown[]) => (await client.query(sql, values)).rows };
  // 1,000 accounts (ids of accounts that need not exist: the counters are all the route reads), a year, 9 shards:
  // 3,294,000 rows, about 20,000,000 calls at 6 a shard and day.
  await database.query(`ALTER TABLE call_usage_daily DROP CONSTRAINT call_usage_daily_user_id_fkey`);
  await database.query(`ALTER TABLE model_usage_daily DROP CONSTRAINT model_usage_daily_user_id_fkey`);
  const accounts = `SELECT $1::int + account AS user_id FROM generate_series(0, 999) AS account`;
  const days = `SELECT (date '2026-01-01' + n) AS day FROM generate_series(0, 365) AS n`;
  await database.query(
    `INSERT INTO call_usage_daily (user_id, day, shard, calls, seconds)
     SELECT a.user_id, d.day, s, 6, 600 FROM (${accounts}) a, (${days}) d, generate_series(0, 8) AS s`,
    [api.userId],
  );
  await database.query(
    `INSERT INTO model_usage_daily (user_id, day, purpose, requests, prompt_tokens, completion_tokens, total_tokens)
     SELECT a.user_id, d.day, p, 50, 40000, 5000, 45000
       FROM (${accounts}) a, (${days}) d, unnest(ARRAY['analysis', 'document_embeddings', 'search_embeddings']) AS p`,
    [api.userId],
  );
  await database.query('ANALYZE call_usage_daily');
  await database.query('ANALYZE model_usage_daily');
  const [{ rows }] = await database.query(`SELECT count(*)::int AS rows FROM call_usage_daily`);
  const times: number[] = [];
  for (let run = 0; run < 60; run++) {
    const started = nowMs();
    const answer = await api.request<{ data: { calls: number }[] }>(
      'GET',
      '/api/user/usage?date_from=2026-01-01&date_to=2027-01-01',
    );
    times.push(nowMs() - started);
    if (answer.data.length !== 366 || answer.data[0].calls !== 54) process.exitCode = 1;
  }
  try {
    const plan = await client.query(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
       SELECT day, sum(calls), sum(seconds) FROM call_usage_daily
        WHERE user_id = $1 AND day BETWEEN '2026-01-01' AND '2027-01-01' GROUP BY day`,
      [api.userId],
    );
    const statementMs = (plan.rows[0]['QUERY PLAN'] as { 'Execution Time': number }[])[0]['Execution Time'];
    printTable(
      'GET /api/user/usage over 366 days, beside the counters of 1,000 accounts (about 20,000,000 calls)',
      ['counter rows', 'request p50', 'p95', 'the calls statement'],
      [[rows, `${fixed(median(times), 2)} ms`, `${fixed(percentile(times, 95), 2)} ms`, `${fixed(statementMs, 2)} ms`]],
    );

    // The usage trigger's share of a call's insert, as Postgres times its statement and triggers (EXPLAIN ANALYZE
    // runs the insert): single-row inserts, as ingestion makes them, after a warm-up of as many.
    type Timed = { 'Execution Time': number; Triggers?: { 'Trigger Name': string; Time: number }[] };
    const inserts = async (label: string) => {
      const totals = { statement: 0, usage: 0, counters: 0 };
      for (let index = 0; index < 2000; index++) {
        const [timed] = (
          await client.query(
            `EXPLAIN (ANALYZE, FORMAT JSON)
             INSERT INTO calls (user_id, external_id, assistant_name, type, status, client_phone_number,
                                assistant_phone_number, duration)
             VALUES ($1, $2, 'A', 'inbound', 'completed', '+14155550123', '+14155550100', 60)`,
            [api.userId, `trigger-${label}-${index}`],
          )
        ).rows[0]['QUERY PLAN'] as Timed[];
        const trigger = (name: string) => timed.Triggers?.find((item) => item['Trigger Name'] === name)?.Time ?? 0;
        totals.statement += timed['Execution Time'];
        totals.usage += trigger('calls_usage_insert');
        totals.counters += trigger('calls_count_insert_delete');
      }
      return Object.values(totals).map((total) => `${fixed((total * 1000) / 2000, 0)} µs`);
    };
    await inserts('warm');
    printTable(
      'One call insert, as Postgres times it (2,000 single-row inserts after a warm-up of as many; means)',
      ['statement, triggers included', 'the usage trigger', 'the call counters’ trigger'],
      [await inserts('timed')],
    );

    // The migration's count of the calls already stored.
    await client.query(`ALTER TABLE calls DISABLE TRIGGER USER`);
    await client.query(
      `INSERT INTO calls (user_id, external_id, assistant_name, type, status, client_phone_number,
                          assistant_phone_number, duration, created_at)
       SELECT $1, 'backfill-' || n, 'A', 'inbound', 'completed', '+14155550123', '+14155550100', n % 600,
              now() - make_interval(mins => n % 525600)
         FROM generate_series(1, 1000000) AS n`,
      [api.userId],
    );
    await client.query(`ALTER TABLE calls ENABLE TRIGGER USER`);
    await client.query('VACUUM ANALYZE calls');
    const [{ stored }] = (await client.query(`SELECT count(*)::int AS stored FROM calls`)).rows;
    await client.query('BEGIN');
    const started = nowMs();
    await client.query(
      `INSERT INTO call_usage_daily (user_id, day, shard, calls, seconds)
       SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, 8, count(*), sum(duration) FROM calls GROUP BY 1, 2
       ON CONFLICT (user_id, day, shard) DO NOTHING`,
    );
    const backfillMs = nowMs() - started;
    await client.query('ROLLBACK');
    printTable(
      'The migration counting the calls already stored',
      ['calls', 'time'],
      [[stored, `${fixed(backfillMs / 1000, 2)} s`]],
    );
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const [callsArgument, ...latencyArguments] = process.argv.slice(2);
  const calls = Number(callsArgument ?? 400);
  const latencies = latencyArguments.length > 0 ? latencyArguments.map(Number) : [500, 2000];
  const fake = await FakeOpenAi.start();
  const llm = { LLM_BASE_URL: fake.baseUrl, LLM_API_KEY: fake.apiKey, LLM_MODEL: 'gpt-4o-mini' };
  // A machine shared with other runs can take over a second to answer a Redis command.
  const stack = await startBenchStack({ ...llm, REDIS_COMMAND_TIMEOUT_MS: '10000' });
  try {
    // Only the child worker analyses: the figures are one worker process's.
    await stack.worker.close();
    const rows: (string | number)[][] = [];
    for (const latencyMs of process.env.BENCH_THROUGHPUT === '0' ? [] : latencies)
      for (const concurrency of [4, 16]) rows.push(await throughput(stack, fake, llm, calls, latencyMs, concurrency));
    if (rows.length > 0)
      printTable(
        'Calls analysed by one worker process, the provider answering after a fixed latency',
        [
          'provider latency',
          'concurrency',
          'calls',
          'time',
          'calls/min',
          'bound (concurrency / latency)',
          'analysed after p50',
          'p95',
          'worker CPU a call',
          'outcome',
        ],
        rows,
        ['concurrency: WORKER_CONCURRENCY and LLM_CONCURRENCY both; every call written ended and pending, then queued'],
      );
    if (process.env.BENCH_USAGE !== '0') await usageAtScale(stack);
  } finally {
    await stack.close();
    await fake.close();
  }
}

runMain(main);
