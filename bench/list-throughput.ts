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
 *
 * First, every list of an account (ROWS items each) one request at a time, BENCH_SAMPLES (default 300) a case after
 * warm-ups: the API, the bare server and the bare SQL take turns (support/list-cases.ts). The statements the bare
 * server runs for a case are the ones the API ran for it, learnt from a second API process started with
 * support/statement-recorder.ts (the credential's lookup left out: the bare server makes its own). `--latency` stops
 * after that table. A second build (`--before <commit>`, BENCH_BEFORE, or BENCH_OTHER_API, the
 * `dist/apps/api/src/main.js` of a build made elsewhere; see support/other-build.ts) runs its API beside this one on
 * the same database, taking its turn in each round: a before and after in one run, each first answer compared byte
 * for byte. The database has this checkout's schema: the other build must read it (a commit of the same migrations,
 * or one whose lists read only what both have).
 */
import { Pool as PgPool } from 'pg';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { printProfile } from './support/cpu-profile';
import { combineLoads, runLoad, type LoadResult } from './support/http-load';
import {
  bareServerCases,
  LIST_CASE_CPU_HEADERS,
  LIST_CASE_HEADERS,
  LIST_WARM_UPS,
  measureListCases,
  OTHER_API_HEADERS,
  type ListCase,
  type Statement,
} from './support/list-cases';
import { otherBuild, type Build, type OtherBuild } from './support/other-build';
import { CACHE_DIR } from './support/pdf-fixtures';
import {
  API_ENTRY,
  freePort,
  productionEnv,
  startBareListServer,
  startServer,
  waitForHttp,
  type ServerProcess,
} from './support/processes';
import { fixed, printTable, runMain } from './support/report';
import { ApiClient, type BenchEnvironment, createBenchEnvironment } from './support/stack';

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
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const LATENCY_ONLY = process.argv.includes('--latency');
const RUNTIME_TOKEN = 'bench-runtime-token-0123456789abcdefghijkl';
/** The bare server makes its own credential lookup and `last_used_at` refresh; a transaction's bounds are not work. */
const NOT_THE_LIST = /token_hash|SET last_used_at|^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION)/i;

/** A list request of the latency table: its route and query string. */
interface ListRequest {
  path: string;
  name: string;
  query: string;
}

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

/** A second account with ROWS of everything it can list (more leads than a page), through the API. */
async function seedLists(client: ApiClient, origin: string): Promise<ListRequest[]> {
  const create = (path: string, body: unknown) => client.request('POST', `/api/user/${path}`, body, 201);
  const knowledgebases: number[] = [];
  for (let index = 0; index < ROWS; index++) knowledgebases.push(await client.createKnowledgebase(`FAQ ${index}`));
  for (let index = 0; index < ROWS; index++) {
    const form = new FormData();
    form.set('name', `Hours ${index}`);
    form.set('type', 'txt');
    form.set('file', new Blob([`We are open on day ${index}.`]), `hours-${index}.txt`);
    await client.request('POST', `/api/user/knowledgebases/${knowledgebases[0]}/documents`, form, 201);
    await create('api-keys', { name: `Key ${index}` });
    await create('folder', { name: `Folder ${index}` });
    await create('label', { name: `Label ${index}` });
    await create('tools', {
      name: `lookup_order_${index}`,
      description: 'Finds an order by its number',
      endpoint: 'https://orders.example.com/orders/{order_id}',
      method: 'GET',
    });
  }
  const assistants: number[] = [];
  for (let index = 0; index < ROWS; index++) assistants.push(await client.createOutboundAssistant());
  const campaigns: number[] = [];
  for (let index = 0; index < ROWS; index++)
    campaigns.push((await create('campaign', { name: `Campaign ${index}`, assistant_id: assistants[0] })).data.id);
  for (let index = 0; index < 2 * ROWS; index++)
    await create('lead', { phone_number: `+1415555${String(1000 + index)}`, campaign_id: campaigns[0] });
  for (let index = 0; index < 2 * ROWS; index++) {
    const response = await fetch(`${origin}/api/internal/calls/bench-${index}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${RUNTIME_TOKEN}` },
      body: JSON.stringify({
        assistant_id: assistants[index % ROWS],
        type: 'outbound',
        status: index % 2 ? 'completed' : 'no-answer',
        client_phone_number: '+14155550123',
        assistant_phone_number: '+14155550999',
      }),
    });
    if (response.status !== 201)
      throw new Error(`call ingestion answered ${response.status}: ${await response.text()}`);
  }
  return [
    { path: '/api/user/knowledgebases', name: 'knowledgebases', query: '' },
    { path: `/api/user/knowledgebases/${knowledgebases[0]}/documents`, name: 'documents', query: '' },
    { path: '/api/user/api-keys', name: 'API keys', query: '' },
    { path: '/api/user/assistants/get', name: 'assistants', query: '' },
    { path: '/api/user/folders', name: 'folders', query: '' },
    { path: '/api/user/labels', name: 'labels', query: '' },
    { path: '/api/user/tools', name: 'tools', query: '' },
    { path: '/api/user/campaigns', name: 'campaigns', query: '' },
    { path: '/api/user/leads', name: 'leads', query: '' },
    { path: '/api/user/leads', name: 'leads, one filter', query: 'status=created' },
    { path: '/api/user/leads', name: 'leads, page 2', query: 'page=2' },
    { path: '/api/user/calls', name: 'calls', query: '' },
    { path: '/api/user/calls', name: 'calls, one filter', query: 'status=completed' },
  ];
}

/**
 * The statements the API runs for each request, from a built API with support/statement-recorder.ts preloaded, in
 * its own process on the same database; the credential's own statements and a transaction's bounds left out.
 */
async function learnStatements(
  environment: Pick<BenchEnvironment, 'name' | 'databaseUrl' | 'redisUrl'>,
  token: string,
  requests: ListRequest[],
): Promise<ListCase[][]> {
  const log = join(CACHE_DIR, `list-statements-${process.pid}.jsonl`);
  mkdirSync(CACHE_DIR, { recursive: true });
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const recorder: ServerProcess = startServer(
    ['-r', 'ts-node/register/transpile-only', '-r', join(__dirname, 'support', 'statement-recorder.ts'), API_ENTRY],
    { ...productionEnv(environment), PORT: String(port), LOG_LEVEL: 'warn', STATEMENT_LOG: log },
  );
  try {
    await waitForHttp(`${origin}/api/health`, recorder.child);
    const byPath = new Map<string, ListCase[]>();
    for (const request of requests) {
      writeFileSync(log, '');
      const response = await fetch(`${origin}${request.path}${request.query ? `?${request.query}` : ''}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (response.status !== 200) throw new Error(`${request.path}?${request.query} answered ${response.status}`);
      await response.arrayBuffer();
      const recorded = readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as [string, unknown[], number, number])
        .filter(([text]) => !NOT_THE_LIST.test(text))
        .sort((a, b) => a[2] - b[2]);
      // A statement asked for after another's answer came back waited for it (or may have): it goes a round later.
      const rounds: number[] = [];
      for (const [index, [, , sent]] of recorded.entries())
        rounds.push(
          Math.max(0, ...recorded.slice(0, index).map(([, , , answered], j) => (answered < sent ? rounds[j] + 1 : 0))),
        );
      const sql: Statement[] = recorded.map(([text, values], index) => [text, values, rounds[index]]);
      if (sql.length === 0) throw new Error(`${request.path}: no statement recorded`);
      byPath.set(request.path, [
        ...(byPath.get(request.path) ?? []),
        { name: request.name, query: request.query, sql },
      ]);
    }
    return [...byPath.values()];
  } finally {
    await recorder.stop();
    rmSync(log, { force: true });
  }
}

/** Each list case one request at a time against the API, the bare server with the API's statements, and bare SQL. */
async function measureLatency(
  environment: Pick<BenchEnvironment, 'name' | 'databaseUrl' | 'redisUrl'>,
  apiOrigin: string,
  apiPid: number,
  otherApi: Build | undefined,
): Promise<number> {
  const client = await ApiClient.register(apiOrigin);
  const requests = await seedLists(client, apiOrigin);
  const groups = await learnStatements(environment, client.token, requests);
  const paths = groups.map((cases) => requests.find((request) => request.name === cases[0].name)!.path);
  const bareCases = Object.assign(
    {},
    ...groups.map((cases, index) => JSON.parse(bareServerCases(paths[index], cases)) as object),
  );
  const bareHttp = await startBareListServer(environment.databaseUrl, {
    LIST_CASES: JSON.stringify(bareCases),
    QUEUE_PREFIX: environment.name,
    REDIS_URL: environment.redisUrl,
  });
  const bareSql = new PgPool({ connectionString: environment.databaseUrl, max: 2 });
  const otherPort = otherApi ? await freePort() : 0;
  const other = otherApi
    ? startServer(
        [otherApi.apiEntry],
        { ...productionEnv(environment), PORT: String(otherPort), LOG_LEVEL },
        'SIGTERM',
        otherApi.root,
      )
    : undefined;
  const rows: (string | number)[][] = [];
  try {
    if (other) await waitForHttp(`http://127.0.0.1:${otherPort}/api/health`, other.child);
    for (const [index, cases] of groups.entries())
      rows.push(
        ...(await measureListCases(
          client,
          bareSql,
          paths[index],
          cases,
          SAMPLES,
          bareHttp.baseUrl,
          { api: apiPid, bare: bareHttp.process.child.pid! },
          other && { baseUrl: `http://127.0.0.1:${otherPort}`, pid: other.child.pid! },
        )),
      );
  } finally {
    await Promise.all([bareHttp.process.stop(), other?.stop()]);
    await bareSql.end();
  }
  printTable(
    `Every list, ${ROWS}-${2 * ROWS} rows each (${SAMPLES} requests a case, sequential, API LOG_LEVEL=${LOG_LEVEL})`,
    [...LIST_CASE_HEADERS, ...LIST_CASE_CPU_HEADERS, ...(other ? OTHER_API_HEADERS : [])],
    rows,
    [
      ...(otherApi ? [`other: ${otherApi.label} (${otherApi.apiEntry})`] : []),
      `Statements in round trips per case (the API's, run by the bare server): ${groups
        .flat()
        .map((item) => `${item.name} ${item.sql.length} in ${new Set(item.sql.map(([, , round]) => round)).size}`)
        .join(', ')}`,
      `Load average at the end: ${loadavg()
        .map((value) => fixed(value, 2))
        .join(' ')}`,
    ],
  );
  return groups.flat().length * (SAMPLES + LIST_WARM_UPS);
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
    results.set(path, { api: combineLoads(apiRuns), bare: combineLoads(bareRuns), medianRatio: middle(ratios) });
  }
  return { results, answered };
}

/** The throughput table: both servers under load, route by route; answers how many requests the API answered. */
async function measureThroughput(
  apiOrigin: string,
  api: ServerProcess,
  bare: Awaited<ReturnType<typeof startBareListServer>>,
): Promise<number> {
  const token = await seed(apiOrigin);
  const { results, answered } = await measure(
    { origin: apiOrigin, pid: api.child.pid! },
    { origin: bare.baseUrl, pid: bare.process.child.pid! },
    token,
  );
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
  return answered;
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
      RUNTIME_API_TOKEN: RUNTIME_TOKEN,
    },
    PROFILE ? 'SIGUSR2' : 'SIGTERM',
  );
  let bare: Awaited<ReturnType<typeof startBareListServer>> | undefined;
  let other: OtherBuild | undefined;
  try {
    other = await otherBuild();
    bare = await startBareListServer(environment.databaseUrl);
    await waitForHttp(`${apiOrigin}/api/health`, api.child);
    let apiAnswered = await measureLatency(environment, apiOrigin, api.child.pid!, other);
    if (!LATENCY_ONLY) apiAnswered += await measureThroughput(apiOrigin, api, bare);
    await api.stop();

    if (PROFILE) {
      printProfile(PROFILE_DIR, apiAnswered);
    }
  } finally {
    await Promise.allSettled([api.stop(), bare?.process.stop()]);
    await other?.close();
    await environment.clean();
  }
}

runMain(main, { comparesBuilds: true });
