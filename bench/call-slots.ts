/**
 * The account's limit of calls in progress under load: BENCH_CONNECTIONS voice-runtime loops (default 40) against the
 * API and worker in this process, for BENCH_SECONDS (10) each run. A loop opens the session of a new inbound call on
 * the account's number; admitted (201), the call lasts BENCH_CALL_MS (50) and ends with its final write; refused
 * (429), the loop tries a new call after 10 ms. One run with the limit below the loops (BENCH_LIMIT, 10: every slot
 * contended), one with a limit nobody reaches (the same statements, no refusal). Reports the sessions' latency,
 * admitted and refused, the final writes', calls a second, the most calls in progress sampled every 10 ms, and
 * checks that the account's count equals its calls in progress at the end (none). Not a timed test.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/call-slots.ts
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { sipTrunkRequest } from '../test/support/factories';
import { BENCH_RUNTIME_TOKEN } from './support/http-load';
import { fixed, nowMs, percentile, printTable, runMain } from './support/report';
import { ApiClient, startBenchStack } from './support/stack';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 40);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CALL_MS = Number(process.env.BENCH_CALL_MS ?? 50);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 10);
const OPEN = `status IN ('initiated', 'ringing', 'in-progress')`;

interface RunResult {
  admitted: number[];
  refused: number[];
  finals: number[];
  most: number;
}

async function main(): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const limit of [LIMIT, 1_000_000]) {
    const stack = await startBenchStack({
      RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN,
      ACCOUNT_MAX_CONCURRENT_CALLS: String(limit),
      LOG_LEVEL: 'warn',
    });
    try {
      const result = await run(stack.baseUrl, stack.api.get(DataSource));
      const seconds = SECONDS;
      rows.push([
        limit === LIMIT ? String(limit) : 'unreached',
        fixed(result.admitted.length / seconds),
        fixed(percentile(result.admitted, 50)),
        fixed(percentile(result.admitted, 95)),
        result.refused.length,
        result.refused.length > 0 ? fixed(percentile(result.refused, 95)) : '-',
        fixed(percentile(result.finals, 95)),
        result.most,
      ]);
    } finally {
      await stack.close();
    }
  }
  printTable(
    `Calls in progress of one account: ${CONNECTIONS} runtime loops, ${SECONDS} s a run, calls of ${CALL_MS} ms`,
    [
      'limit',
      'calls/s',
      'session p50 ms',
      'session p95 ms',
      'refused',
      'refused p95 ms',
      'final write p95 ms',
      'most in progress',
    ],
    rows,
    ['"most in progress" is sampled every 10 ms; at the end the account\'s count and its open calls are both 0.'],
  );
}

async function run(baseUrl: string, database: DataSource): Promise<RunResult> {
  const api = await ApiClient.register(baseUrl);
  const trunk = await api.request('POST', '/api/user/phone-numbers/sip-trunks', sipTrunkRequest(), 201);
  const [language] = await api.request<{ id: number }[]>('GET', '/api/user/assistants/languages');
  await api.request(
    'POST',
    '/api/user/assistant',
    { name: 'Front desk', type: 'inbound', language_id: language.id, phone_number_id: trunk.data.id },
    201,
  );
  const runtime = { authorization: `Bearer ${BENCH_RUNTIME_TOKEN}`, 'content-type': 'application/json' };
  const result: RunResult = { admitted: [], refused: [], finals: [], most: 0 };
  const deadline = nowMs() + SECONDS * 1000;

  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [{ open }] = await database.query(
        `SELECT count(*)::int AS open FROM calls WHERE user_id = $1 AND ${OPEN}`,
        [api.userId],
      );
      result.most = Math.max(result.most, open);
      await sleep(10);
    }
  })();
  const loop = async () => {
    while (nowMs() < deadline) {
      const externalId = `bench-${randomBytes(8).toString('hex')}`;
      const started = nowMs();
      const session = await fetch(`${baseUrl}/api/internal/calls/${externalId}/session`, {
        method: 'POST',
        headers: runtime,
        body: JSON.stringify({
          type: 'inbound',
          client_phone_number: '+14155550199',
          assistant_phone_number: trunk.data.phone_number,
        }),
      });
      await session.arrayBuffer();
      const took = nowMs() - started;
      if (session.status === 429) {
        result.refused.push(took);
        await sleep(10);
        continue;
      }
      if (session.status !== 201) throw new Error(`session answered ${session.status}`);
      result.admitted.push(took);
      await sleep(CALL_MS);
      const ending = nowMs();
      const final = await fetch(`${baseUrl}/api/internal/calls/${externalId}`, {
        method: 'PUT',
        headers: runtime,
        body: JSON.stringify({ status: 'completed', duration: 1 }),
      });
      await final.arrayBuffer();
      if (final.status !== 200) throw new Error(`final write answered ${final.status}`);
      result.finals.push(nowMs() - ending);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  sampling = false;
  await sampler;
  const [check] = await database.query(
    `SELECT (SELECT count(*)::int FROM calls WHERE user_id = $1 AND ${OPEN}) AS open,
            (SELECT in_progress FROM account_call_slots WHERE user_id = $1) AS counted`,
    [api.userId],
  );
  if (check.open !== 0 || check.counted !== 0) throw new Error(`calls left in progress: ${JSON.stringify(check)}`);
  return result;
}

runMain(main);
