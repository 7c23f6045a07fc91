/**
 * The voice runtime at call speed, against the built API and the built worker each in their own process
 * (production settings, as deployed), driven from this process over keep-alive connections (undici `Pool`):
 *   1. sessions: `POST /api/internal/calls/{external_id}/session` (deployment token) for new inbound calls to
 *      numbers whose assistant links 10 tools, one at a time (unloaded), then BENCH_SESSION_CONCURRENCY at a time,
 *      then, if asked for, arriving at BENCH_SESSION_RATE a second;
 *   2. events: BENCH_CALLS simulated calls at once, each posting one transcript turn (about 100 characters, its
 *      `seq` counting up) to `POST /api/internal/calls/{external_id}/events` with its own call token every
 *      BENCH_INTERVAL_MS for BENCH_SECONDS. A call's next post waits for the answer to its previous one, as an agent
 *      does, but keeps the cadence from the call's start (a late answer makes the next post go at once); the calls'
 *      starts are spread over the first interval;
 *   3. then every call's turns are read back from the database: exactly the ones acknowledged, by seq and text;
 *   4. the statements an events request runs (the guard's call-token lookup, the insert), timed one at a time
 *      through `pg` from this process, beside a bare `SELECT 1`, on the run's own data.
 *
 *   npm run bench:runtime                         (builds first; 60 s of events, 200 calls)
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/runtime-events.ts --seconds 10 --calls 50
 *
 * Flags (or their environment variables): --seconds (BENCH_SECONDS, 60), --calls (BENCH_CALLS, 200), --interval-ms
 * (BENCH_INTERVAL_MS, 500), --sessions (BENCH_SESSIONS, 200 a run), --session-concurrency (BENCH_SESSION_CONCURRENCY,
 * 10; a list such as `2,5,10` makes one run each), --session-rate (BENCH_SESSION_RATE, none; sessions starting at a
 * steady rate a second whatever the answers, e.g. `50,100,200`, one run each), --numbers (BENCH_NUMBERS, 10: SIP
 * trunk numbers, one inbound assistant each; sessions take them in turn), --hook-ms (BENCH_HOOK_MS, none: the account's
 * ring-time hook, a server on 127.0.0.1 started here that answers every `call.assistant_request` after that many ms
 * with another inbound assistant of the account and a variable; every session must then run that assistant, and the
 * report gives the sessions' latency above the hook's own). `--profile` runs the API under
 * `node --cpu-prof` and prints its heaviest functions and packages (per request of the whole run). The whole run is
 * stopped, and cleaned up, after BENCH_DEADLINE_SECONDS (default 300 plus three times the events' duration).
 *
 * `--before <commit>` (BENCH_BEFORE, or BENCH_OTHER_API and BENCH_OTHER_WORKER; support/other-build.ts) runs that
 * build beside this one instead, each with its own database, Redis prefix and account: --rounds (BENCH_ROUNDS, 3)
 * rounds, each running the sessions and the events on this build, then on the other, and the medians of each with
 * the ratio now/before. A build without the runtime's routes is refused with that reason.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as PgClient, Pool as PgPool, type PoolClient as PgPoolClient } from 'pg';
import { Pool } from 'undici';
import { hashToken } from '@app/platform';
import { printProfile } from './support/cpu-profile';
import {
  BENCH_RUNTIME_TOKEN,
  backendCpuMs,
  busyBetween,
  cpuSince,
  machineTicks,
  processCpuMs,
} from './support/http-load';
import { CURRENT_BUILD, otherBuild, otherBuildAsked, type Build } from './support/other-build';
import { CACHE_DIR } from './support/pdf-fixtures';
import {
  API_ENTRY,
  apiNodeArguments,
  freePort,
  productionEnv,
  startBuiltStack,
  startServer,
  waitForHttp,
  WORKER_ENTRY,
  type BuiltStack,
  type ServerProcess,
} from './support/processes';
import { fixed, nowMs, onInterrupt, percentile, printTable, runMain, setting } from './support/report';
import { ApiClient, createBenchEnvironment } from './support/stack';

const SECONDS = setting('seconds', 'BENCH_SECONDS', 60);
const CALLS = setting('calls', 'BENCH_CALLS', 200);
const INTERVAL_MS = setting('interval-ms', 'BENCH_INTERVAL_MS', 500);
const SESSIONS = setting('sessions', 'BENCH_SESSIONS', 200);
/** Rounds of a comparison of two builds (each round runs both). */
const ROUNDS = setting('rounds', 'BENCH_ROUNDS', 3);
/** A comma-separated list of positive integers, from `--name value`, `--name=value` or the environment. */
function list(flag: string, variable: string, fallback: string): number[] {
  const index = process.argv.findIndex((argument) => argument === `--${flag}` || argument.startsWith(`--${flag}=`));
  const text =
    index < 0
      ? (process.env[variable] ?? fallback)
      : process.argv[index].includes('=')
        ? process.argv[index].split('=')[1]
        : process.argv[index + 1];
  const values = text.split(',').filter(Boolean).map(Number);
  if (values.some((value) => !Number.isInteger(value) || value <= 0)) {
    throw new Error(`--${flag} (${variable}) must be positive integers, comma-separated`);
  }
  return values;
}

/** Sessions in flight at once, beside the one-at-a-time run: one number, or several (`2,5,10`), one run each. */
const SESSION_CONCURRENCIES = list('session-concurrency', 'BENCH_SESSION_CONCURRENCY', '10');
/** Sessions arriving at these rates a second, whatever the answers (none unless asked for). */
const SESSION_RATES = list('session-rate', 'BENCH_SESSION_RATE', '');
const SESSION_CONCURRENCY = Math.max(...SESSION_CONCURRENCIES);
const NUMBERS = setting('numbers', 'BENCH_NUMBERS', 10);
/** The ring-time hook's answer time, when the run has one (`--hook-ms` or BENCH_HOOK_MS). */
const HOOK_MS =
  process.argv.some((argument) => argument === '--hook-ms' || argument.startsWith('--hook-ms=')) ||
  process.env.BENCH_HOOK_MS
    ? setting('hook-ms', 'BENCH_HOOK_MS', 50)
    : undefined;
const TOOLS = 10;
const SESSION_WARM_UPS = 20;
const SQL_SAMPLES = 500;
const DEADLINE_SECONDS = setting('deadline-seconds', 'BENCH_DEADLINE_SECONDS', 300 + 3 * SECONDS);
const REQUEST_TIMEOUT_MS = 30_000;
const PROFILE = process.argv.includes('--profile');
/** `--burner`: a busy loop in a process of its own takes one core for the events run, as other work on a host would. */
const BURNER = process.argv.includes('--burner');
/** Every REPEAT_EVERY-th turn of a call is posted twice, as a runtime whose answer was lost posts it again. */
const REPEAT_EVERY = setting('repeat-every', 'BENCH_REPEAT_EVERY', 10);
const PROFILE_DIR = join(CACHE_DIR, 'runtime-profile');

/** What callers and agents say: 100-103 characters each. */
const TURNS = [
  'Hi, I ordered a blue kettle last Tuesday and it still has not arrived. Could you check where it is now?',
  'Of course. Could you read me the order number from your confirmation email, the one starting with A?',
  'Yes, it is A as in apple, one seven, four two, nine. I paid with my card, if that helps you find it.',
  'Thank you. I can see the parcel left our warehouse on Friday and the courier expects to deliver today.',
  'Great, but I will be at work until six. Is there any way the driver could leave it with a neighbour?',
  'I can add a note for the courier asking them to leave it next door. Which house number should I give?',
  'Number twelve, the Millers. They are usually home in the afternoon. And can I still change my address?',
  'The parcel is already on its way, so the address is fixed, but the note will reach the driver in time.',
];
const turnText = (call: number, seq: number) => TURNS[(call + seq) % TURNS.length];

interface Sample {
  ms: number;
  status: number;
}

interface Summary {
  count: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function summarise(samples: Sample[], ok: (sample: Sample) => boolean): Summary {
  const good = samples.filter(ok).map((sample) => sample.ms);
  return {
    count: samples.length,
    errors: samples.length - good.length,
    p50: percentile(good, 50),
    p95: percentile(good, 95),
    p99: percentile(good, 99),
    max: good.length > 0 ? Math.max(...good) : Number.NaN,
  };
}

/** One POST with a JSON body; its status, parsed answer (when JSON) and latency. Failures are status 0. */
async function post(
  pool: Pool,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; json: any; ms: number }> {
  const sent = nowMs();
  try {
    const response = await pool.request({
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    const text = await response.body.text();
    const ms = nowMs() - sent;
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, json, ms };
  } catch (error) {
    return { status: 0, json: { error: String(error) }, ms: nowMs() - sent };
  }
}

const load = () =>
  loadavg()
    .map((value) => fixed(value, 2))
    .join(' ');

async function timedQuery(client: PgPoolClient, text: string): Promise<number> {
  const sent = nowMs();
  await client.query(text);
  return nowMs() - sent;
}

type Statement = [text: string, values: unknown[]];

/**
 * The statements the API runs for one session (a new inbound call to `number`) and for one events request with that
 * session's token, in the order it asked for them, from a second API process on the run's database with
 * support/statement-recorder.ts preloaded; with the ids they were run for, to replace.
 */
async function learnStatements(
  env: Record<string, string>,
  number: string,
): Promise<{
  session: Statement[];
  events: Statement[];
  externalId: string;
  callId: number;
  tokenHash: string;
}> {
  const log = join(CACHE_DIR, `runtime-statements-${process.pid}.jsonl`);
  mkdirSync(CACHE_DIR, { recursive: true });
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const recorder = startServer(
    ['-r', 'ts-node/register/transpile-only', '-r', join(__dirname, 'support', 'statement-recorder.ts'), API_ENTRY],
    { ...env, PORT: String(port), LOG_LEVEL: 'warn', STATEMENT_LOG: log },
  );
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  try {
    await waitForHttp(`${origin}/api/health`, recorder.child);
    const body = () => ({
      type: 'inbound',
      client_phone_number: '+14155550199',
      assistant_phone_number: number,
    });
    for (let warmUp = 0; warmUp < 5; warmUp++) {
      await post(pool, `/api/internal/calls/bench-runtime-learn-${warmUp}/session`, BENCH_RUNTIME_TOKEN, body());
    }
    const read = () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as [string, unknown[], number, number])
        .sort((a, b) => a[2] - b[2])
        .map(([text, values]): Statement => [text, values]);
    const externalId = 'bench-runtime-learn';
    writeFileSync(log, '');
    const session = await post(pool, `/api/internal/calls/${externalId}/session`, BENCH_RUNTIME_TOKEN, body());
    if (session.status !== 201) throw new Error(`the learnt session answered ${session.status}`);
    const sessionStatements = read();
    writeFileSync(log, '');
    const token = session.json.data.token as string;
    const events = await post(pool, `/api/internal/calls/${externalId}/events`, token, {
      events: [{ seq: 0, type: 'transcript', role: 'user', text: turnText(0, 0), at: new Date().toISOString() }],
    });
    if (events.status !== 200) throw new Error(`the learnt events request answered ${events.status}`);
    const eventsStatements = read();
    return {
      session: sessionStatements,
      events: eventsStatements,
      externalId,
      callId: session.json.data.call.id as number,
      tokenHash: hashToken(token),
    };
  } finally {
    await pool.destroy();
    await recorder.stop();
    rmSync(log, { force: true });
  }
}

interface OpenedCall {
  externalId: string;
  token: string;
}

/**
 * The owner's ring-time hook on 127.0.0.1: answers each request `delayMs` after its body arrived with `answer()`, and
 * counts the requests.
 */
async function startHookServer(
  delayMs: number,
  answer: () => unknown,
): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      setTimeout(
        () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer())),
        delayMs,
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ring`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The account every session runs for, on the API at `origin`: 10 tools, NUMBERS SIP trunk numbers (local
 * provisioner), one inbound assistant on each linking the tools. Its client, its numbers and its language.
 */
async function setUpAccount(
  origin: string,
): Promise<{ client: ApiClient; numbers: string[]; english: number; toolIds: number[] }> {
  const client = await ApiClient.register(origin);
  const languages = await client.request<{ id: number; iso_2: string }[]>('GET', '/api/user/assistants/languages');
  const english = (languages.find((language) => language.iso_2 === 'en') ?? languages[0]).id;
  const toolIds: number[] = [];
  for (let index = 0; index < TOOLS; index++) {
    const tool = await client.request<{ data: { id: number } }>(
      'POST',
      '/api/user/tools',
      {
        name: `lookup_order_${index}`,
        description: `Looks an order up by its number (variant ${index})`,
        endpoint: 'https://api.example.com/orders/{order_id}',
        method: 'GET',
        schema: [
          { name: 'order_id', type: 'string', description: 'The order number', required: true },
          { name: 'quantity', type: 'integer', description: 'How many' },
          { name: 'express', type: 'boolean', description: 'Express delivery' },
        ],
      },
      201,
    );
    toolIds.push(tool.data.id);
  }
  const numbers: string[] = [];
  for (let index = 0; index < NUMBERS; index++) {
    numbers.push(
      await client.createAnsweredNumber({
        name: `Front desk ${index}`,
        language_id: english,
        tool_ids: toolIds,
        initial_message: 'Hello, {{company}} here. How can I help?',
        system_prompt: 'You answer for {{company}}, politely and briefly. Look orders up with the tools.',
        variables: { company: 'Acme' },
        max_duration: 600,
      }),
    );
  }
  return { client, numbers, english, toolIds };
}

type SessionRun = Awaited<ReturnType<ReturnType<typeof sessionDriver>['sessionRun']>>;

/**
 * New inbound sessions on the API at `origin`, to `numbers` in turn; a session counts when it answered 201 with the
 * 10 tools (and whatever `accepts` asks of its answer), and its call is kept for the events run.
 */
function sessionDriver(options: {
  origin: string;
  numbers: string[];
  apiPid: number;
  pg: PgClient;
  database: string;
  pools: Pool[];
  accepts?: (data: any) => boolean;
}) {
  const { origin, numbers, pg, database, pools } = options;
  let opened = 0;
  const openSession = async (pool: Pool): Promise<Sample & { call?: OpenedCall }> => {
    const index = opened++;
    const externalId = `bench-runtime-${index}`;
    const answer = await post(pool, `/api/internal/calls/${externalId}/session`, BENCH_RUNTIME_TOKEN, {
      type: 'inbound',
      client_phone_number: `+1415${2000000 + index}`,
      assistant_phone_number: numbers[index % numbers.length],
    });
    const ok =
      answer.status === 201 &&
      answer.json?.data?.tools?.length === TOOLS &&
      (options.accepts?.(answer.json.data) ?? true);
    // Answered, but not with the 10 tools (or not as `accepts` asks).
    if (!ok && answer.status === 201) answer.status = -1;
    return {
      ms: answer.ms,
      status: answer.status,
      call: ok ? { externalId, token: answer.json.data.token as string } : undefined,
    };
  };
  /**
   * `count` sessions, `concurrency` in flight at once (each starting when one ends) or, with `perSecond`, one
   * starting every 1/perSecond s whatever the answers (an arrival rate; `concurrency` connections at most).
   */
  const sessionRun = async (count: number, concurrency: number, perSecond?: number) => {
    const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });
    pools.push(pool);
    const samples: (Sample & { call?: OpenedCall })[] = [];
    let started = 0;
    const apiCpuBefore = processCpuMs(options.apiPid);
    const backendsBefore = await backendCpuMs(pg, database);
    const ticksBefore = machineTicks();
    const begun = nowMs();
    if (perSecond === undefined) {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (started < count) {
            started++;
            samples.push(await openSession(pool));
          }
        }),
      );
    } else {
      await Promise.all(
        Array.from({ length: count }, async (_, index) => {
          await sleep(Math.max(0, begun + (index * 1000) / perSecond - nowMs()));
          samples.push(await openSession(pool));
        }),
      );
    }
    const seconds = (nowMs() - begun) / 1000;
    const machineBusy = busyBetween(ticksBefore, machineTicks());
    const apiCpuMs = processCpuMs(options.apiPid) - apiCpuBefore;
    const backendCpu = cpuSince(backendsBefore, await backendCpuMs(pg, database));
    await pool.close();
    return { samples, seconds, apiCpuMs, backendCpuMs: backendCpu, machineBusy };
  };
  return { sessionRun };
}

/**
 * `calls` posting turns over `pool`: each call a turn every INTERVAL_MS for a run's seconds, its next post waiting for
 * the answer to its previous one but keeping the cadence from the call's start, every REPEAT_EVERY-th turn posted
 * twice; the turns acknowledged, by call.
 */
function turnDriver(pool: Pool, calls: OpenedCall[]) {
  const acknowledged = calls.map(() => [] as number[]);
  const counts = { repeated: 0, repeatsWrong: 0 };
  let nextSeq = 1;
  const postTurn = async (call: number, seq: number) => {
    const { externalId, token } = calls[call];
    const body = {
      events: [
        {
          seq,
          type: 'transcript',
          role: seq % 2 === 0 ? 'user' : 'assistant',
          text: turnText(call, seq),
          at: new Date().toISOString(),
        },
      ],
    };
    const answer = await post(pool, `/api/internal/calls/${externalId}/events`, token, body);
    if (answer.status === 200 && answer.json?.data?.recorded === 1) acknowledged[call].push(seq);
    else if (answer.status === 200) answer.status = -1; // answered, but did not record the turn
    if (answer.status === 200 && seq > 0 && seq % REPEAT_EVERY === 0) {
      // The same post again: acknowledged, and recorded nothing more.
      const again = await post(pool, `/api/internal/calls/${externalId}/events`, token, body);
      counts.repeated++;
      if (again.status !== 200 || again.json?.data?.recorded !== 0) counts.repeatsWrong++;
    }
    return answer;
  };
  return {
    acknowledged,
    counts,
    /** Warms the connections: one turn a call (seq 0, checked like any other), not measured. */
    warmUp: () => Promise.all(calls.map((_, call) => postTurn(call, 0))),
    run: async (seconds: number) => {
      const samples: Sample[] = [];
      const lateness: number[] = [];
      const failures = new Map<string, number>();
      const firstSeq = nextSeq;
      const begun = nowMs();
      const end = begun + seconds * 1000;
      let lastSeq = firstSeq;
      await Promise.all(
        calls.map(async (_, call) => {
          const start = begun + (call / calls.length) * INTERVAL_MS;
          for (let turn = 0; ; turn++) {
            const due = start + turn * INTERVAL_MS;
            if (due >= end) return;
            const wait = due - nowMs();
            if (wait > 0) await sleep(wait);
            lateness.push(Math.max(0, nowMs() - due));
            lastSeq = Math.max(lastSeq, firstSeq + turn + 1);
            const answer = await postTurn(call, firstSeq + turn);
            samples.push({ ms: answer.ms, status: answer.status });
            if (answer.status !== 200) {
              const reason = `${answer.status} ${JSON.stringify(answer.json).slice(0, 120)}`;
              failures.set(reason, (failures.get(reason) ?? 0) + 1);
            }
          }
        }),
      );
      nextSeq = lastSeq;
      return { samples, lateness, failures, seconds: (nowMs() - begun) / 1000 };
    },
  };
}

/** Bounded in time: past the deadline the interrupt path stops the processes and drops the databases. */
function stopAfter(seconds: number): NodeJS.Timeout {
  const deadline = setTimeout(() => {
    console.error(`Deadline of ${seconds} s passed: stopping`);
    process.exitCode = 1;
    process.kill(process.pid, 'SIGTERM');
  }, seconds * 1000);
  deadline.unref();
  return deadline;
}

interface ComparedRound {
  sequential: SessionRun;
  concurrent: SessionRun;
  events: Summary;
  apiCpuMsPerEvent: number;
  acknowledged: number;
  stored: number;
  repeatsWrong: number;
}

/**
 * This build and another (support/other-build.ts) side by side, each with its own database, Redis prefix, API and
 * worker: each round runs the sessions (one at a time, then SESSION_CONCURRENCY at a time) and the events on this
 * build, then on the other (A, B, A, B, ...); every build's medians over the rounds and the ratio now/before.
 */
async function compared(): Promise<void> {
  if (PROFILE || HOOK_MS !== undefined || SESSION_RATES.length > 0 || SESSION_CONCURRENCIES.length > 1) {
    throw new Error(
      'A comparison of two builds runs without --profile, --hook-ms, --session-rate or a list of concurrencies',
    );
  }
  const deadline = stopAfter(
    setting('deadline-seconds', 'BENCH_DEADLINE_SECONDS', 300 + ROUNDS * 2 * (2 * SECONDS + 60)),
  );
  const other = (await otherBuild())!;
  const builds: Build[] = [CURRENT_BUILD, other];
  const env = { RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN, ACCOUNT_MAX_CONCURRENT_CALLS: '1000000' };
  const stacks: BuiltStack[] = [];
  const pools: Pool[] = [];
  const pgs: PgClient[] = [];
  const closeClients = async () => {
    await Promise.allSettled([...pools.map((pool) => pool.destroy()), ...pgs.map((pg) => pg.end())]);
    pgs.length = 0;
  };
  const forgetClients = onInterrupt(closeClients);
  try {
    // The other build first: one from before the voice runtime has no sessions to compare.
    stacks.push(await startBuiltStack(other, { env }));
    const probe = await fetch(`${stacks[0].baseUrl}/api/internal/calls/bench-probe/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_RUNTIME_TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    await probe.arrayBuffer();
    if (probe.status === 404) {
      throw new Error(
        `${other.label} has no POST /api/internal/calls/{external_id}/session (nor the events route): the voice ` +
          'runtime came after it, so this benchmark has nothing to compare there. Compare with a build that has it.',
      );
    }
    stacks.unshift(await startBuiltStack(CURRENT_BUILD, { env }));
    const drivers: ReturnType<typeof sessionDriver>[] = [];
    for (const stack of stacks) {
      const pg = new PgClient({ connectionString: stack.environment.databaseUrl });
      pg.on('error', () => undefined);
      await pg.connect();
      pgs.push(pg);
      const { numbers } = await setUpAccount(stack.baseUrl);
      const driver = sessionDriver({
        origin: stack.baseUrl,
        numbers,
        apiPid: stack.api.child.pid!,
        pg,
        database: new URL(stack.environment.databaseUrl).pathname.slice(1),
        pools,
      });
      await driver.sessionRun(SESSION_WARM_UPS, 1);
      drivers.push(driver);
    }
    const turn = async (index: number): Promise<ComparedRound> => {
      const { sessionRun } = drivers[index];
      const sequential = await sessionRun(SESSIONS, 1);
      const concurrent = await sessionRun(SESSIONS, SESSION_CONCURRENCY);
      const calls = [...sequential.samples, ...concurrent.samples].flatMap((sample) =>
        sample.call ? [sample.call] : [],
      );
      while (calls.length < CALLS) {
        const { samples } = await sessionRun(Math.min(CALLS - calls.length, 50), SESSION_CONCURRENCY);
        for (const sample of samples) if (sample.call) calls.push(sample.call);
        if (samples.every((sample) => !sample.call)) throw new Error('no session could be opened for the events run');
      }
      calls.length = CALLS;
      const pool = new Pool(stacks[index].baseUrl, { connections: CALLS, pipelining: 1 });
      pools.push(pool);
      const turns = turnDriver(pool, calls);
      await turns.warmUp();
      const burner = BURNER ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
      const stopBurner = onInterrupt(async () => void burner?.kill('SIGKILL'));
      const apiCpuBefore = processCpuMs(stacks[index].api.child.pid!);
      const run = await turns.run(SECONDS);
      const apiCpuMs = processCpuMs(stacks[index].api.child.pid!) - apiCpuBefore;
      burner?.kill('SIGKILL');
      stopBurner();
      await pool.close();
      // Counted by rows: a turn stored twice, or one not acknowledged, makes the counts differ.
      const { rows } = await pgs[index].query<{ stored: number }>(
        `SELECT count(*)::int AS stored FROM calls c JOIN call_events e ON e.call_id = c.id
          WHERE c.external_id = ANY($1) AND e.type = 'transcript'`,
        [calls.map((call) => call.externalId)],
      );
      const events = summarise(run.samples, (sample) => sample.status === 200);
      return {
        sequential,
        concurrent,
        events,
        apiCpuMsPerEvent: apiCpuMs / Math.max(1, events.count),
        acknowledged: turns.acknowledged.reduce((sum, seqs) => sum + seqs.length, 0),
        stored: rows[0].stored,
        repeatsWrong: turns.counts.repeatsWrong,
      };
    };
    const rounds: ComparedRound[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results: ComparedRound[] = [];
      for (const index of stacks.keys()) results.push(await turn(index));
      rounds.push(results);
    }
    const sessionP95 = (run: SessionRun) => summarise(run.samples, (sample) => sample.status === 201).p95;
    const sessionErrors = (run: SessionRun) => summarise(run.samples, (sample) => sample.status === 201).errors;
    const figures: { name: string; of: (round: ComparedRound) => number; digits: number }[] = [
      { name: 'sessions one at a time, p95 ms', of: (round) => sessionP95(round.sequential), digits: 1 },
      {
        name: `sessions ${SESSION_CONCURRENCY} at a time, p95 ms`,
        of: (round) => sessionP95(round.concurrent),
        digits: 1,
      },
      { name: 'events p50 ms', of: (round) => round.events.p50, digits: 1 },
      { name: 'events p95 ms', of: (round) => round.events.p95, digits: 1 },
      { name: 'events p99 ms', of: (round) => round.events.p99, digits: 1 },
      { name: 'API CPU ms/event', of: (round) => round.apiCpuMsPerEvent, digits: 2 },
    ];
    const median = (values: number[]) => percentile(values, 50);
    printTable(
      `The runtime, ${builds.map((build) => build.label).join(' and ')} side by side: ${ROUNDS} rounds of ${SESSIONS} ` +
        `sessions one at a time, ${SESSIONS} ${SESSION_CONCURRENCY} at a time, then ${CALLS} calls posting a turn ` +
        `every ${INTERVAL_MS} ms for ${SECONDS} s${BURNER ? ', a CPU burner taking one core' : ''} (medians over rounds)`,
      ['figure', ...builds.map((build) => build.label), 'ratio now/before'],
      figures.map(({ name, of, digits }) => [
        name,
        ...builds.map((_, index) => fixed(median(rounds.map((round) => of(round[index]))), digits)),
        fixed(median(rounds.map((round) => of(round[0]) / of(round[1]))), 2),
      ]),
      [
        "Ratio: the median of the rounds' ratios. Each round's events p95 ms: " +
          rounds.map((round) => round.map((result) => fixed(result.events.p95)).join(' / ')).join(', '),
        ...builds.map((build, index) => {
          const all = rounds.map((round) => round[index]);
          const sum = (of: (result: ComparedRound) => number) => all.reduce((total, result) => total + of(result), 0);
          return (
            `${build.label}: failed sessions ${sum((result) => sessionErrors(result.sequential) + sessionErrors(result.concurrent))}, ` +
            `failed events ${sum((result) => result.events.errors)}; ` +
            `turns acknowledged ${sum((result) => result.acknowledged)}, rows stored ${sum((result) => result.stored)}; ` +
            `repeats not acknowledged as duplicates ${sum((result) => result.repeatsWrong)}`
          );
        }),
        `other build: ${other.root}`,
      ],
    );
    const failed = rounds
      .flat()
      .some(
        (result) =>
          result.events.errors > 0 ||
          sessionErrors(result.sequential) + sessionErrors(result.concurrent) > 0 ||
          result.acknowledged !== result.stored ||
          result.repeatsWrong > 0,
      );
    if (failed) process.exitCode = 1;
  } finally {
    forgetClients();
    await closeClients();
    await Promise.allSettled(stacks.map((stack) => stack.close()));
    await other.close();
    clearTimeout(deadline);
  }
}

async function main(): Promise<void> {
  if (otherBuildAsked()) return compared();
  const loadBefore = load();
  const startedAt = new Date();
  const deadline = stopAfter(DEADLINE_SECONDS);

  const environment = await createBenchEnvironment();
  const database = new URL(environment.databaseUrl).pathname.slice(1);
  const [apiPort, workerPort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${apiPort}`;
  const common = {
    ...productionEnv(environment),
    RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN,
    // Every session opens a call that stays in progress: the account's limit is not what is measured here.
    ACCOUNT_MAX_CONCURRENT_CALLS: '1000000',
    PORT: String(apiPort),
    WORKER_PORT: String(workerPort),
    // The ring-time hook's server is this process's, on 127.0.0.1.
    ...(HOOK_MS === undefined ? {} : { OUTBOUND_ALLOW_LOOPBACK: 'true' }),
  };
  let vipId = 0;
  const hook =
    HOOK_MS === undefined
      ? undefined
      : await startHookServer(HOOK_MS, () => ({
          assistant_id: vipId,
          variables: { caller_tier: 'gold' },
        }));
  if (PROFILE) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  const processes: ServerProcess[] = [];
  const pools: Pool[] = [];
  const sqlPools: PgPool[] = [];
  const pg = new PgClient({ connectionString: environment.databaseUrl });
  // The database is dropped WITH (FORCE) at the end; a connection it ends is no failure of the run.
  pg.on('error', () => undefined);
  let pgConnected = false;
  const closeClients = async () => {
    await Promise.allSettled([...pools.map((pool) => pool.destroy()), ...sqlPools.map((pool) => pool.end())]);
    sqlPools.length = 0;
    if (pgConnected) await pg.end().catch(() => undefined);
    pgConnected = false;
  };
  // On an interrupt (or the deadline) the clients close before the database is dropped.
  const forgetClients = onInterrupt(closeClients);
  try {
    const api = startServer(
      [
        ...(PROFILE
          ? [
              '--cpu-prof',
              `--cpu-prof-dir=${PROFILE_DIR}`,
              '--import',
              'data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))',
            ]
          : apiNodeArguments()),
        API_ENTRY,
      ],
      common,
      PROFILE ? 'SIGUSR2' : 'SIGTERM',
    );
    processes.push(api);
    const worker = startServer([WORKER_ENTRY], common);
    processes.push(worker);
    await waitForHttp(`${origin}/api/health`, api.child);
    await waitForHttp(`http://127.0.0.1:${workerPort}/api/health`, worker.child);
    await pg.connect();
    pgConnected = true;

    const { client, numbers, english, toolIds } = await setUpAccount(origin);
    if (hook) {
      const vip = await client.request<{ data: { id: number } }>(
        'POST',
        '/api/user/assistant',
        {
          name: 'VIP desk',
          type: 'inbound',
          language_id: english,
          tool_ids: toolIds,
          initial_message: 'Welcome back to {{company}}, a {{caller_tier}} customer.',
          variables: { company: 'Acme' },
          max_duration: 600,
        },
        201,
      );
      vipId = vip.data.id;
      await client.request('PUT', '/api/user/settings', { server_url: hook.url, server_timeout_ms: 2000 }, 200);
    }

    // 1. Sessions.
    const { sessionRun } = sessionDriver({
      origin,
      numbers,
      apiPid: api.child.pid!,
      pg,
      database,
      pools,
      // With the hook, a session must run the assistant it named.
      accepts: (data) => !hook || (data.assistant.id === vipId && data.call.assistant_request?.status === 'answered'),
    });
    await sessionRun(SESSION_WARM_UPS, 1);
    const sequential = await sessionRun(SESSIONS, 1);
    const concurrentRuns: { concurrency: number; run: Awaited<ReturnType<typeof sessionRun>> }[] = [];
    for (const concurrency of SESSION_CONCURRENCIES) {
      concurrentRuns.push({ concurrency, run: await sessionRun(SESSIONS, concurrency) });
    }
    const rateRuns: { perSecond: number; run: Awaited<ReturnType<typeof sessionRun>> }[] = [];
    for (const perSecond of SESSION_RATES) {
      rateRuns.push({ perSecond, run: await sessionRun(SESSIONS, 50, perSecond) });
    }
    const sessionOk = (sample: Sample) => sample.status === 201;

    // 2. Events, on calls the sessions above opened (more are opened if they were too few).
    const calls: OpenedCall[] = [...concurrentRuns, ...rateRuns, { run: sequential }]
      .flatMap(({ run }) => run.samples)
      .flatMap((sample) => (sample.call ? [sample.call] : []))
      .slice(0, CALLS);
    while (calls.length < CALLS) {
      const { samples } = await sessionRun(Math.min(CALLS - calls.length, 50), SESSION_CONCURRENCY);
      for (const sample of samples) if (sample.call) calls.push(sample.call);
      if (samples.every((sample) => !sample.call)) throw new Error('no session could be opened for the events run');
    }
    const pool = new Pool(origin, { connections: CALLS, pipelining: 1 });
    pools.push(pool);
    const turns = turnDriver(pool, calls);
    const { acknowledged } = turns;
    await turns.warmUp();

    const burner = BURNER ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
    const stopBurner = onInterrupt(async () => void burner?.kill('SIGKILL'));
    const apiCpuBefore = processCpuMs(api.child.pid!);
    const workerCpuBefore = processCpuMs(worker.child.pid!);
    const backendsBefore = await backendCpuMs(pg, database);
    const ownCpuBefore = process.cpuUsage();
    const ticksBefore = machineTicks();
    const { samples, lateness, failures, seconds } = await turns.run(SECONDS);
    const { repeated, repeatsWrong } = turns.counts;
    const ticksAfter = machineTicks();
    burner?.kill('SIGKILL');
    stopBurner();
    const ownCpu = process.cpuUsage(ownCpuBefore);
    const apiCpuMs = processCpuMs(api.child.pid!) - apiCpuBefore;
    const workerCpuMs = processCpuMs(worker.child.pid!) - workerCpuBefore;
    const backendsAfter = await backendCpuMs(pg, database);
    const backendCpu = cpuSince(backendsBefore, backendsAfter);
    await pool.close();

    // 3. Lose nothing: every call has exactly the turns acknowledged to it, by seq and text, and no others.
    const { rows } = await pg.query<{ external_id: string; seq: number; text: string; role: string }>(
      `SELECT c.external_id, e.seq, e.data->>'text' AS text, e.data->>'role' AS role
         FROM calls c JOIN call_events e ON e.call_id = c.id
        WHERE c.external_id = ANY($1) AND e.type = 'transcript'`,
      [calls.map((call) => call.externalId)],
    );
    const stored = new Map<string, Map<number, { text: string; role: string }>>();
    let duplicated = 0;
    for (const row of rows) {
      if (!stored.has(row.external_id)) stored.set(row.external_id, new Map());
      const turns = stored.get(row.external_id)!;
      // Counted by rows: a turn stored twice is an extra one.
      if (turns.has(row.seq)) duplicated++;
      turns.set(row.seq, { text: row.text, role: row.role });
    }
    let lost = 0;
    let extra = duplicated;
    let altered = 0;
    let callsExact = 0;
    calls.forEach((call, index) => {
      const turns = stored.get(call.externalId) ?? new Map<number, { text: string; role: string }>();
      const expected = new Set(acknowledged[index]);
      let exact = turns.size === expected.size;
      for (const seq of expected) {
        const turn = turns.get(seq);
        if (!turn) {
          lost++;
          exact = false;
        } else if (turn.text !== turnText(index, seq) || turn.role !== (seq % 2 === 0 ? 'user' : 'assistant')) {
          altered++;
          exact = false;
        }
      }
      for (const seq of turns.keys()) if (!expected.has(seq)) extra++;
      if (exact) callsExact++;
    });
    const acknowledgedTurns = acknowledged.reduce((sum, seqs) => sum + seqs.length, 0);

    // 4. Where a request's time goes without the API: the statements a session and an events request run, learnt
    // from a second API process on the same database with support/statement-recorder.ts preloaded (as
    // list-throughput.ts learns a list's), then run through pg from this process with fresh ids.
    const learnt = await learnStatements(common, numbers[0]);
    const sqlPool = (max: number) => {
      const created = new PgPool({ connectionString: environment.databaseUrl, max });
      created.on('error', () => undefined);
      sqlPools.push(created);
      return created;
    };
    let replayed = 0;
    /** One session's statements in order on one connection, as for a new call; each statement's time. */
    const replaySession = async (client: PgPoolClient): Promise<number[]> => {
      const externalId = `bench-runtime-sql-${replayed++}`;
      let callId: number | undefined;
      const times: number[] = [];
      for (const [text, values] of learnt.session) {
        const fresh = values.map((value) =>
          value === learnt.externalId
            ? externalId
            : value === learnt.tokenHash
              ? randomBytes(32).toString('hex')
              : value === learnt.callId
                ? callId
                : value,
        );
        const sent = nowMs();
        const { rows } = await client.query<{ id?: number; external_id?: string }>(text, fresh);
        times.push(nowMs() - sent);
        if (rows[0]?.external_id === externalId && rows[0].id !== undefined) callId = rows[0].id;
      }
      return times;
    };
    let nextSeq = 1_000;
    /** One events request's statements (the guard's lookup, the insert of one new turn) on the learnt call. */
    const replayEvents = async (client: PgPoolClient): Promise<number[]> => {
      const times: number[] = [];
      for (const [text, values] of learnt.events) {
        const fresh = values.map((value) =>
          typeof value === 'string' && value.startsWith('[{')
            ? JSON.stringify((JSON.parse(value) as { seq: number }[]).map((event) => ({ ...event, seq: nextSeq++ })))
            : value,
        );
        const sent = nowMs();
        await client.query(text, fresh);
        times.push(nowMs() - sent);
      }
      return times;
    };
    /** `count` replays, `concurrency` at a time, each on a connection of its own; per statement, and in all. */
    const replay = async (work: (client: PgPoolClient) => Promise<number[]>, count: number, concurrency: number) => {
      const pool = sqlPool(concurrency);
      await Promise.all(Array.from({ length: concurrency }, () => pool.query('SELECT 1')));
      const perStatement: number[][] = [];
      const wholes: number[] = [];
      let started = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (started < count) {
            started++;
            const client = await pool.connect();
            try {
              const times = await work(client);
              times.forEach((ms, index) => (perStatement[index] ??= []).push(ms));
              wholes.push(times.reduce((sum, ms) => sum + ms, 0));
            } finally {
              client.release();
            }
          }
        }),
      );
      return { perStatement, wholes };
    };
    await replay(replaySession, 20, 1);
    const sessionSql = [
      { concurrency: 1, ...(await replay(replaySession, SESSIONS, 1)) },
      { concurrency: SESSION_CONCURRENCY, ...(await replay(replaySession, SESSIONS, SESSION_CONCURRENCY)) },
    ];
    await replay(replayEvents, 50, 1);
    const eventsSql = [
      { concurrency: 1, ...(await replay(replayEvents, SQL_SAMPLES, 1)) },
      { concurrency: SESSION_CONCURRENCY, ...(await replay(replayEvents, SQL_SAMPLES, SESSION_CONCURRENCY)) },
    ];
    const roundTrips = (await replay(async (client) => [await timedQuery(client, 'SELECT 1')], SQL_SAMPLES, 1)).wholes;
    // The server's own time for an events request's statements (the insert rolled back).
    const executionTimes: string[] = [];
    for (const [text, values] of learnt.events) {
      await pg.query('BEGIN');
      try {
        const { rows: plan } = await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE) ${text}`, values);
        executionTimes.push(
          plan
            .map((row) => row['QUERY PLAN'].trim())
            .filter((line) => /^(Planning|Execution) Time/.test(line))
            .join(', '),
        );
      } finally {
        await pg.query('ROLLBACK');
      }
    }

    // Reports.
    const sessionRow = (name: string, run: Awaited<ReturnType<typeof sessionRun>>) => {
      const summary = summarise(run.samples, sessionOk);
      return [
        name,
        summary.count,
        summary.errors,
        fixed(summary.count / run.seconds, 0),
        fixed(summary.p50),
        fixed(summary.p95),
        fixed(summary.p99),
        fixed(summary.max),
        fixed(run.apiCpuMs / summary.count, 2),
        fixed(run.backendCpuMs / summary.count, 2),
        `${fixed((run.apiCpuMs / (run.seconds * 1000)) * 100, 0)}%`,
        `${fixed(run.machineBusy * 100, 0)}%`,
      ];
    };
    const aboveHook = (run: Awaited<ReturnType<typeof sessionRun>>) => {
      const summary = summarise(run.samples, sessionOk);
      return `p50 ${fixed(summary.p50 - HOOK_MS!)} / p95 ${fixed(summary.p95 - HOOK_MS!)} ms`;
    };
    printTable(
      `Sessions (inbound, ${NUMBERS} numbers, each assistant with ${TOOLS} tools linked${
        hook ? `, the ring-time hook answering in ${HOOK_MS} ms` : ''
      }; target p95 <= 30 ms${hook ? ' above the hook' : ''})`,
      [
        'run',
        'sessions',
        'errors',
        'sessions/s',
        'p50 ms',
        'p95 ms',
        'p99 ms',
        'max ms',
        'API CPU ms/session',
        'PG CPU ms/session',
        'API busy',
        'machine busy',
      ],
      [
        sessionRow('one at a time', sequential),
        ...concurrentRuns.map(({ concurrency, run }) => sessionRow(`${concurrency} at a time`, run)),
        ...rateRuns.map(({ perSecond, run }) => sessionRow(`${perSecond}/s arriving`, run)),
      ],
      [
        `After ${SESSION_WARM_UPS} warm-up sessions. CPU per session from /proc (10 ms ticks). API busy: its CPU time as a`,
        'share of one core; machine busy: of every core, other work on the machine included.',
        ...(hook
          ? [
              `The hook was asked ${hook.requests()} times (once a session, the statements' learning included). ` +
                `Above its ${HOOK_MS} ms: one at a time ${aboveHook(sequential)}; ` +
                concurrentRuns.map(({ concurrency, run }) => `${concurrency} at a time ${aboveHook(run)}`).join('; ') +
                rateRuns.map(({ perSecond, run }) => `; ${perSecond}/s arriving ${aboveHook(run)}`).join(''),
            ]
          : []),
      ],
    );
    const events = summarise(samples, (sample) => sample.status === 200);
    printTable(
      `Events: ${CALLS} calls, a turn each every ${INTERVAL_MS} ms for ${SECONDS} s${
        BURNER ? ', a CPU burner taking one core' : ''
      } (target p95 <= ${BURNER ? 40 : 20} ms, nothing lost)`,
      ['requests', 'errors', 'requests/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'late p95 ms', 'late max ms'],
      [
        [
          events.count,
          events.errors,
          fixed(events.count / seconds, 1),
          fixed(events.p50),
          fixed(events.p95),
          fixed(events.p99),
          fixed(events.max),
          fixed(percentile(lateness, 95)),
          fixed(Math.max(0, ...lateness)),
        ],
      ],
      [
        `Asked for: ${fixed(CALLS / (INTERVAL_MS / 1000), 0)} requests/s. "late": how long after its due time a post went out (its call's previous answer came late).`,
        ...[...failures].map(([reason, count]) => `  ${count} x ${reason}`),
      ],
    );
    printTable(
      'Turns in the database afterwards (every call read back by rows: seq, role and text)',
      [
        'calls',
        'turns acknowledged',
        'turns stored',
        'lost',
        'extra',
        'altered',
        'calls exact',
        'posted twice',
        'repeats not acknowledged as duplicates',
      ],
      [[CALLS, acknowledgedTurns, rows.length, lost, extra, altered, callsExact, repeated, repeatsWrong]],
    );
    const machineBusy = busyBetween(ticksBefore, ticksAfter);
    const perRequest = (ms: number) => fixed(ms / Math.max(1, events.count), 2);
    const ownCpuMs = (ownCpu.user + ownCpu.system) / 1000;
    printTable(
      'CPU during the events run',
      ['process', 'CPU ms/request', 'share of one core'],
      [
        ['API', perRequest(apiCpuMs), `${fixed((apiCpuMs / (seconds * 1000)) * 100, 0)}%`],
        [
          'PostgreSQL backends of the run',
          perRequest(backendCpu),
          `${fixed((backendCpu / (seconds * 1000)) * 100, 0)}%`,
        ],
        ['worker', perRequest(workerCpuMs), `${fixed((workerCpuMs / (seconds * 1000)) * 100, 0)}%`],
        ['this load generator', perRequest(ownCpuMs), `${fixed((ownCpuMs / (seconds * 1000)) * 100, 0)}%`],
      ],
      [
        `The whole machine (${cpus().length} cores) was ${fixed(machineBusy * 100, 0)}% busy during the run, other work included.`,
      ],
    );
    const statementName = (text: string) => {
      const line = text.replace(/\s+/g, ' ').trim();
      return line.length > 64 ? `${line.slice(0, 61)}...` : line;
    };
    const sqlRows = (
      names: string[],
      runs: { concurrency: number; perStatement: number[][]; wholes: number[] }[],
      whole: string,
    ) =>
      [
        ...names.map((name, index) => ({ name, pick: (run: (typeof runs)[number]) => run.perStatement[index] })),
        {
          name: whole,
          pick: (run: (typeof runs)[number]) => run.wholes,
        },
      ].map(({ name, pick }) => [
        name,
        ...runs.flatMap((run) => [fixed(percentile(pick(run), 50), 2), fixed(percentile(pick(run), 95), 2)]),
      ]);
    const sqlHeaders = [
      'statement',
      '1 at a time p50 ms',
      'p95 ms',
      `${SESSION_CONCURRENCY} at a time p50 ms`,
      'p95 ms',
    ];
    printTable(
      `A session's statements, bare: run through pg from this process (${SESSIONS} sessions a run, new calls)`,
      sqlHeaders,
      sqlRows(
        learnt.session.map(([text]) => statementName(text)),
        sessionSql,
        'the whole session, statement after statement',
      ),
    );
    printTable(
      `An events request's statements, bare (${SQL_SAMPLES} a run, one new turn each)`,
      sqlHeaders,
      [
        ...sqlRows(
          learnt.events.map(([text]) => statementName(text)),
          eventsSql,
          'the whole request, statement after statement',
        ),
        ['SELECT 1 (a round trip)', fixed(percentile(roundTrips, 50), 2), fixed(percentile(roundTrips, 95), 2), '', ''],
      ],
      learnt.events.map(([text], index) => `EXPLAIN ANALYZE ${statementName(text)}: ${executionTimes[index]}`),
    );
    console.log(
      `\nStarted ${startedAt.toISOString()}; load average before: ${loadBefore}, after: ${load()} (${cpus().length} cores)`,
    );

    if (PROFILE) {
      await api.stop();
      printProfile(
        PROFILE_DIR,
        SESSION_WARM_UPS + (1 + SESSION_CONCURRENCIES.length + SESSION_RATES.length) * SESSIONS + CALLS + events.count,
      );
    }

    if (events.errors > 0 || lost > 0 || extra > 0 || altered > 0 || repeatsWrong > 0) process.exitCode = 1;
  } finally {
    forgetClients();
    await closeClients();
    await Promise.allSettled(processes.map((server) => server.stop()));
    await hook?.close();
    await environment.clean();
    clearTimeout(deadline);
  }
}

runMain(main, { comparesBuilds: true });
