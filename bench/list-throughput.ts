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
 * BENCH_SECONDS (default 30) and BENCH_CONNECTIONS (default 50) change the load; BENCH_LOG_LEVEL (default
 * `info`, the production default: one line per request, written to /dev/null) the API's LOG_LEVEL.
 * `--profile` runs the API under `node --cpu-prof` and prints its heaviest functions and packages.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { summariseProfile } from './support/cpu-profile';
import { runLoad, type LoadResult } from './support/http-load';
import { CACHE_DIR } from './support/pdf-fixtures';
import { API_ENTRY, freePort, startServer, waitForHttp, type ServerProcess } from './support/processes';
import { fixed, printTable, runMain } from './support/report';
import { createBenchEnvironment } from './support/stack';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARM_UP_SECONDS = 3;
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

/** Per route, a warm-up of WARM_UP_SECONDS and then the measured run; `answered` counts both. */
async function measure(
  origin: string,
  pid: number,
  token: string,
): Promise<{ results: Map<string, LoadResult>; answered: number }> {
  const headers = { authorization: `Bearer ${token}` };
  const results = new Map<string, LoadResult>();
  let answered = 0;
  for (const path of ROUTES) {
    const warmUp = await runLoad({
      origin,
      path,
      headers,
      connections: CONNECTIONS,
      seconds: WARM_UP_SECONDS,
      serverPid: pid,
    });
    answered += warmUp.requests;
    const result = await runLoad({ origin, path, headers, connections: CONNECTIONS, seconds: SECONDS, serverPid: pid });
    if (result.errors > 0) throw new Error(`${origin}${path}: ${result.errors} requests failed or were refused`);
    results.set(path, result);
    answered += result.requests;
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
      NODE_ENV: 'production',
      PORT: String(apiPort),
      DATABASE_URL: environment.databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: environment.name,
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      LOG_LEVEL,
      LOG_FORMAT: 'json',
      SHUTDOWN_DRAIN_SECONDS: '0',
      // Every request is counted; none is refused.
      RATE_LIMIT_PER_MINUTE: '100000000',
    },
    PROFILE ? 'SIGUSR2' : 'SIGTERM',
  );
  let bare: ServerProcess | undefined;
  try {
    await waitForHttp(`${apiOrigin}/api/health`, api.child);
    const token = await seed(apiOrigin);
    const { results: apiResults, answered: apiAnswered } = await measure(apiOrigin, api.child.pid!, token);
    await api.stop();

    const barePort = await freePort();
    const bareOrigin = `http://127.0.0.1:${barePort}`;
    bare = startServer(['-r', 'ts-node/register/transpile-only', join(__dirname, 'support', 'bare-list-server.ts')], {
      DATABASE_URL: environment.databaseUrl,
      PORT: String(barePort),
    });
    await waitForHttp(`${bareOrigin}/api/user/api-keys`, bare.child);
    const { results: bareResults } = await measure(bareOrigin, bare.child.pid!, token);

    const rows: (string | number)[][] = [];
    for (const path of ROUTES) {
      for (const [name, result] of [
        ['API', apiResults.get(path)!],
        ['bare', bareResults.get(path)!],
      ] as const) {
        rows.push([
          `${path} ${name}`,
          result.requests,
          fixed(result.perSecond, 0),
          fixed(result.p50Ms, 1),
          fixed(result.p99Ms, 1),
          fixed(result.serverCpuMsPerRequest, 3),
          name === 'API' ? fixed(result.perSecond / bareResults.get(path)!.perSecond, 2) : '1.00',
        ]);
      }
    }
    printTable(
      `Authenticated lists, ${CONNECTIONS} connections, ${SECONDS} s each, API LOG_LEVEL=${LOG_LEVEL}`,
      ['route, server', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'ratio to bare'],
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
    await Promise.allSettled([api.stop(), bare?.stop()]);
    await environment.clean();
  }
}

runMain(main);
