/**
 * A campaign of 10,000 leads with `max_calls_in_parallel` 10, dialled by two worker processes (one beside the API in
 * this process, one child) through the local dialer in demo mode, each call answered at once and completed after
 * 100 ms. Reports the total time, dials per second, the scheduler's latency from a lead falling due (a slot freed by
 * an ended call, or the start) to its dial request, and the most calls in flight at once, both sampled every 50 ms
 * and computed exactly from the calls' timestamps. Not a timed test.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/dialer.ts [leads] [callMs]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { ApiClient, startBenchStack } from './support/stack';
import { fixed, nowMs, percentile, printTable, runMain } from './support/report';

const PARALLEL = 10;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function main(): Promise<void> {
  const leads = Number(process.argv[2] ?? 10_000);
  const callMs = Number(process.argv[3] ?? 100);
  const settings = { LOCAL_DIALER_DEMO_MS: String(callMs), DIALER_INTERVAL_SECONDS: '5', WORKER_CONCURRENCY: '8' };
  const stack = await startBenchStack(settings);
  const secondPort = await freePort();
  const second = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/worker/src/main.ts'],
    {
      env: {
        ...process.env,
        ...settings,
        NODE_ENV: 'test',
        WORKER_PORT: String(secondPort),
        DATABASE_URL: stack.config.databaseUrl,
        REDIS_URL: stack.config.redisUrl,
        QUEUE_PREFIX: stack.config.queuePrefix,
        ENCRYPTION_KEY: stack.config.encryptionKey.toString('base64'),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const database = stack.api.get(DataSource);
  try {
    const api = await ApiClient.register(stack.baseUrl);
    const assistantId = await api.createOutboundAssistant();
    const numbers: number[] = [];
    for (let index = 0; index < 3; index++) {
      const trunk = await api.request(
        'POST',
        '/api/user/phone-numbers/sip-trunks',
        {
          sip_trunk_type: 'number',
          phone_number: `+1415555${String(9000 + index)}`,
          sip_username: 'bench',
          sip_password: 'a-long-secret',
          sip_address: 'sip.carrier.example.com',
        },
        201,
      );
      numbers.push(trunk.data.id);
    }
    const campaign = (
      await api.request(
        'POST',
        '/api/user/campaign',
        {
          name: 'Bench',
          assistant_id: assistantId,
          phone_number_ids: numbers,
          max_calls_in_parallel: PARALLEL,
        },
        201,
      )
    ).data;
    await database.query(
      `INSERT INTO leads (user_id, campaign_id, phone_number, variables)
       SELECT c.user_id, c.id, '+1415' || (2000000 + n)::text, jsonb_build_object('n', n)
         FROM campaigns c, generate_series(1, $2) AS n WHERE c.id = $1`,
      [campaign.id, leads],
    );
    await database.query('ANALYZE');
    // Both workers are up before the clock starts.
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${secondPort}/api/health/ready`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ready) break;
      await sleep(200);
    }

    const inFlight = async () =>
      (
        await database.query(
          `SELECT count(*)::int AS n FROM calls WHERE campaign_id = $1 AND status IN ('initiated', 'ringing', 'in-progress')`,
          [campaign.id],
        )
      )[0].n as number;
    const started = nowMs();
    const startedAt = new Date();
    await api.request('POST', '/api/user/campaigns/update-status', { campaign_id: campaign.id, action: 'start' });
    let sampledMost = 0;
    let samples = 0;
    for (;;) {
      sampledMost = Math.max(sampledMost, await inFlight());
      samples++;
      const [{ status }] = await database.query('SELECT status FROM campaigns WHERE id = $1', [campaign.id]);
      if (status === 'completed') break;
      await sleep(50);
    }
    const seconds = (nowMs() - started) / 1000;

    const calls: { created: number; ended: number; dialled: number }[] = (
      await database.query(
        `SELECT extract(epoch FROM c.created_at) * 1000 AS created, extract(epoch FROM c.ended_at) * 1000 AS ended,
                extract(epoch FROM d.created_at) * 1000 AS dialled
           FROM calls c JOIN local_dial_requests d ON d.attempt_id = c.external_id
          WHERE c.campaign_id = $1`,
        [campaign.id],
      )
    ).map((row: Record<string, string>) => ({
      created: Number(row.created),
      ended: Number(row.ended),
      dialled: Number(row.dialled),
    }));
    const [{ dials, distinct }] = await database.query(
      `SELECT count(*)::int AS dials, count(DISTINCT attempt_id)::int AS distinct FROM local_dial_requests`,
    );
    // Exact concurrency from the timestamps: +1 at each claim, -1 at each end.
    const events = calls.flatMap((call) => [
      [call.created, 1],
      [call.ended, -1],
    ]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let current = 0;
    let exactMost = 0;
    for (const [, change] of events) exactMost = Math.max(exactMost, (current += change));
    // The n-th dial beyond the first PARALLEL falls due when the (n - PARALLEL)-th call ends.
    const dialTimes = calls.map((call) => call.dialled).sort((a, b) => a - b);
    const endTimes = calls.map((call) => call.ended).sort((a, b) => a - b);
    const latencies = dialTimes.map((dialled, index) =>
      Math.max(0, dialled - (index < PARALLEL ? startedAt.getTime() : endTimes[index - PARALLEL])),
    );
    printTable(
      `Dialling ${leads} leads, ${PARALLEL} in parallel, demo calls of ${callMs} ms, two worker processes`,
      ['total', 'dials/s', 'due->dial p50', 'p95', 'most in flight (sampled)', '(exact)', 'dial requests'],
      [
        [
          `${fixed(seconds)} s`,
          fixed(calls.length / seconds),
          `${fixed(percentile(latencies, 50), 0)} ms`,
          `${fixed(percentile(latencies, 95), 0)} ms`,
          `${sampledMost} of ${samples} samples`,
          exactMost,
          `${dials} (${distinct} distinct)`,
        ],
      ],
    );
    if (exactMost > PARALLEL || calls.length !== leads || dials !== leads) process.exitCode = 1;
  } finally {
    second.kill('SIGTERM');
    await once(second, 'exit');
    await stack.close();
  }
}

runMain(main);
