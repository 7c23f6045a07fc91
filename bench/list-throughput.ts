/**
 * Throughput of authenticated lists: `GET /api/user/knowledgebases` and `GET /api/user/api-keys` with an API
 * key, 50 connections for 30 s each, against the built API (`dist/`, its own process, production settings) and,
 * in the same run, against a bare `node:http` + `pg` server doing the same token lookup and SQL
 * (bench/support/bare-list-server.ts). Reports requests/s, latency, the server's CPU time per request, and the
 * API's throughput as a share of the bare server's.
 *
 *   npm run bench:lists               (builds first)
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/list-throughput.ts [--profile]
 *
 * BENCH_SECONDS (default 30, split into BENCH_ROUNDS runs, default 3, alternating between the API and the bare
 * server) and BENCH_CONNECTIONS (default 50) change the load; BENCH_LOG_LEVEL (default
 * `info`, the production default: one line per request, written to /dev/null) the API's LOG_LEVEL.
 * `--profile` runs the API under `node --cpu-prof` and prints its heaviest functions and packages.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { summariseProfile } from './support/cpu-profile';
import { runLoad, type LoadResult } from './support/http-load';
import { CACHE_DIR } from './support/pdf-fixtures';
import { API_ENTRY, freePort, productionEnv, startBareListServer, startServer, waitForHttp } from './support/processes';
import { fixed, printTable, runMain } from './support/report';
import { createBenchEnvironment } from './support/stack';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARM_UP_SECONDS = 3;
/** Each route's measured time is split into this many alternating runs of the API and the bare server. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const PROFILE = process.argv.includes('--profile');
const PROFILE_DIR = join(CACHE_DIR, 'list-profile');
/** Each list holds this many rows besides the credential used. */
const ROWS = 10;
const ROUTES = ['/api/user/knowledgebases', '/api/user/api-keys'];

async function post(origin: string, path: string, token: string | undefined, body: unknown): Promise<any> {
  const response = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** An account with ROWS knowledgebases and ROWS + 1 API keys; returns the key the load uses. */
async function seed(origin: string): Promise<string> {
  const { token: session } = await post(origin, '/api/auth/register', undefined, {
    name: 'Bench',
    email: 'lists@example.com',
    password: 'correct horse battery staple',
  });
  const { api_key } = await post(origin, '/api/user/api-keys', session, { name: 'Load' });
  for (let index = 0; index < ROWS; index++) {
    await post(origin, '/api/user/knowledgebases', session, { name: `Knowledgebase ${index}`, description: 'FAQ' });
    await post(origin, '/api/user/api-keys', session, { name: `Key ${index}` });
  }
  return api_key.token as string;
}

interface Target {
  origin: string;
  pid: number;
}

interface RouteResult {
  api: LoadResult;
  bare: LoadResult;
  /** The median over the rounds of the API's requests/s over the bare server's in the same round. */
  medianRatio: number;
}

const middle = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

/** Several measured runs of one server taken as one: their answers, time and CPU summed. */
function combine(runs: LoadResult[]): LoadResult {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const cpuMs = runs.reduce((sum, run) => sum + run.serverCpuMsPerRequest * run.requests, 0);
  return {
    requests,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    seconds,
    perSecond: requests / seconds,
    p50Ms: middle(runs.map((run) => run.p50Ms)),
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    serverCpuMsPerRequest: cpuMs / Math.max(1, requests),
  };
}

/**
 * Per route, a warm-up of each server, then ROUNDS rounds that each run the API and then the bare server for
 * SECONDS / ROUNDS: both are measured under the same, possibly drifting, load of the machine. `answered` counts the
 * API's answers, warm-up included (for the profile's per-request figures).
 */
async function measure(
  api: Target,
  bare: Target,
  token: string,
): Promise<{ results: Map<string, RouteResult>; answered: number }> {
  const headers = { authorization: `Bearer ${token}` };
  const results = new Map<string, RouteResult>();
  let answered = 0;
  const run = async (target: Target, path: string, seconds: number) => {
    const result = await runLoad({
      origin: target.origin,
      path,
      headers,
      connections: CONNECTIONS,
      seconds,
      serverPid: target.pid,
    });
    if (result.errors > 0) throw new Error(`${target.origin}${path}: ${result.errors} requests failed or were refused`);
    if (target === api) answered += result.requests;
    return result;
  };
  for (const path of ROUTES) {
    await run(api, path, WARM_UP_SECONDS);
    await run(bare, path, WARM_UP_SECONDS);
    const apiRuns: LoadResult[] = [];
    const bareRuns: LoadResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      apiRuns.push(await run(api, path, SECONDS / ROUNDS));
      bareRuns.push(await run(bare, path, SECONDS / ROUNDS));
    }
    const ratios = apiRuns.map((run, round) => run.perSecond / bareRuns[round].perSecond);
    results.set(path, { api: combine(apiRuns), bare: combine(bareRuns), medianRatio: middle(ratios) });
  }
  return { results, answered };
}

async function main(): Promise<void> {
  const environment = await createBenchEnvironment();
  const apiPort = await freePort();
  const apiOrigin = `http://127.0.0.1:${apiPort}`;
  if (PROFILE) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(PROFILE_DIR, { recursive: true });
  }
  const api = startServer(
    [
      ...(PROFILE
        ? [
            '--cpu-prof',
            `--cpu-prof-dir=${PROFILE_DIR}`,
            '--import',
            'data:text/javascript,process.on("SIGUSR2",()=>process.exit(0))',
          ]
        : []),
      API_ENTRY,
    ],
    {
      ...productionEnv(environment),
      PORT: String(apiPort),
      LOG_LEVEL,
    },
    PROFILE ? 'SIGUSR2' : 'SIGTERM',
  );
  let bare: Awaited<ReturnType<typeof startBareListServer>> | undefined;
  try {
    bare = await startBareListServer(environment.databaseUrl);
    await waitForHttp(`${apiOrigin}/api/health`, api.child);
    const token = await seed(apiOrigin);
    const bareOrigin = bare.baseUrl;
    const { results, answered: apiAnswered } = await measure(
      { origin: apiOrigin, pid: api.child.pid! },
      { origin: bareOrigin, pid: bare.process.child.pid! },
      token,
    );
    await api.stop();

    const rows: (string | number)[][] = [];
    for (const path of ROUTES) {
      for (const [name, result] of [
        ['API', results.get(path)!.api],
        ['bare', results.get(path)!.bare],
      ] as const) {
        rows.push([
          `${path} ${name}`,
          result.requests,
          fixed(result.perSecond, 0),
          fixed(result.p50Ms, 1),
          fixed(result.p99Ms, 1),
          fixed(result.serverCpuMsPerRequest, 3),
          name === 'API' ? fixed(result.perSecond / results.get(path)!.bare.perSecond, 2) : '1.00',
          name === 'API' ? fixed(results.get(path)!.medianRatio, 2) : '',
        ]);
      }
    }
    printTable(
      `Authenticated lists, ${CONNECTIONS} connections, ${SECONDS} s each in ${ROUNDS} alternating rounds, API LOG_LEVEL=${LOG_LEVEL}`,
      [
        'route, server',
        'requests',
        'req/s',
        'p50 ms',
        'p99 ms',
        'server CPU ms/req',
        'ratio to bare',
        'median of round ratios',
      ],
      rows,
      [
        `Load average at the end: ${loadavg()
          .map((value) => fixed(value, 2))
          .join(' ')}`,
      ],
    );

    if (PROFILE) {
      const [file] = readdirSync(PROFILE_DIR).filter((name) => name.endsWith('.cpuprofile'));
      const summary = summariseProfile(join(PROFILE_DIR, file), apiAnswered);
      const table = (title: string, lines: typeof summary.functions) =>
        printTable(
          title,
          ['name', 'share of run', 'us/request'],
          lines.map((line) => [
            line.name,
            `${fixed(line.share * 100, 1)}%`,
            fixed(line.microsecondsPerRequest ?? 0, 1),
          ]),
        );
      console.log(`\nAPI profile: busy ${fixed(summary.busyShare * 100, 0)}% of the run (${join(PROFILE_DIR, file)})`);
      table('API self time by package', summary.packages);
      table('API self time by function', summary.functions);
    }
  } finally {
    await Promise.allSettled([api.stop(), bare?.process.stop()]);
    await environment.clean();
  }
}

runMain(main);
