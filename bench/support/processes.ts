import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onInterrupt } from './report';
import type { Build } from './other-build';
import { type BenchEnvironment, createBenchEnvironment } from './stack';

export const ROOT = join(__dirname, '..', '..');
/** The built apps (`npm run build`), as deployed. */
export const API_ENTRY = join(ROOT, 'dist', 'apps', 'api', 'src', 'main.js');
export const WORKER_ENTRY = join(ROOT, 'dist', 'apps', 'worker', 'src', 'main.js');

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** Waits until `url` answers at all (any status), failing early when the server has exited. */
export async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with code ${child.exitCode}`);
    const answered = await fetch(url).then(
      async (response) => (await response.arrayBuffer(), true),
      () => false,
    );
    if (answered) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer within 60 s`);
}

export interface ServerProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a Node process from the project root with `env` added to this one's; `stop` sends `stopSignal`
 * (SIGTERM unless told otherwise, e.g. SIGUSR2 for a profiled process that must exit to write its profile) and
 * kills it after 30 s. An interrupt of the benchmark stops it too.
 */
export function startServer(
  args: string[],
  env: Record<string, string>,
  stopSignal: NodeJS.Signals = 'SIGTERM',
  cwd = ROOT,
): ServerProcess {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = async () => {
    forget();
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(stopSignal);
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await once(child, 'exit');
    clearTimeout(killer);
  };
  const forget = onInterrupt(stop);
  return { child, stop };
}

/**
 * Node options for a build's API or worker process (e.g. "--cpu-prof --cpu-prof-dir=…" to profile it):
 * BENCH_API_NODE_ARGS and BENCH_WORKER_NODE_ARGS for this checkout's build, BENCH_OTHER_API_NODE_ARGS and
 * BENCH_OTHER_WORKER_NODE_ARGS for the build it is compared with, so that both can be profiled in one run.
 */
export function nodeArguments(role: 'api' | 'worker', build?: Pick<Build, 'root'>): string[] {
  const other = build !== undefined && build.root !== ROOT;
  const name = `BENCH_${other ? 'OTHER_' : ''}${role.toUpperCase()}_NODE_ARGS`;
  return (process.env[name] ?? '').split(' ').filter(Boolean);
}

/** This build's API options (BENCH_API_NODE_ARGS). */
export const apiNodeArguments = (): string[] => nodeArguments('api');

/**
 * The settings the built apps run with in these benchmarks: production mode against the run's own database and
 * Redis prefix, JSON logs, no shutdown drain, and a rate limit that counts every request but refuses none.
 */
export function productionEnv(
  environment: Pick<BenchEnvironment, 'name' | 'databaseUrl' | 'redisUrl'>,
): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: environment.databaseUrl,
    REDIS_URL: environment.redisUrl,
    QUEUE_PREFIX: environment.name,
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    // Required in production; no benchmark follows the links it builds.
    APP_URL: 'http://localhost',
    LOG_FORMAT: 'json',
    SHUTDOWN_DRAIN_SECONDS: '0',
    RATE_LIMIT_PER_MINUTE: '100000000',
    // Any free port: benchmarks run several APIs, and beside `npm start` on the machine.
    METRICS_PORT: '0',
  };
}

export interface BuiltApi {
  /** http://127.0.0.1:PORT of the API */
  baseUrl: string;
  databaseUrl: string;
  /** The run's Redis key prefix (QUEUE_PREFIX). */
  queuePrefix: string;
  /** The run's Redis. */
  redisUrl: string;
  process: ServerProcess;
  /** Stops the API, drops the database and deletes the run's Redis keys. */
  close(): Promise<void>;
}

/**
 * The built API in its own process with production settings, as deployed, against a fresh database and Redis
 * prefix (no worker). Requests are counted by the rate limiter, none refused.
 */
export async function startBuiltApi(env: Record<string, string> = {}): Promise<BuiltApi> {
  const environment = await createBenchEnvironment();
  const port = await freePort();
  const api = startServer([...apiNodeArguments(), API_ENTRY], {
    ...productionEnv(environment),
    PORT: String(port),
    ...env,
  });
  const close = async () => {
    await api.stop();
    await environment.clean();
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/api/health`, api.child);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    baseUrl,
    databaseUrl: environment.databaseUrl,
    queuePrefix: environment.name,
    redisUrl: environment.redisUrl,
    process: api,
    close,
  };
}

/**
 * The bare HTTP reference (support/bare-list-server.ts) in its own process against `databaseUrl`, answering once
 * started. `env` adds its list cases and Redis prefix (see that file).
 */
export async function startBareListServer(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ baseUrl: string; process: ServerProcess }> {
  const port = await freePort();
  const server = startServer(
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', join(__dirname, 'bare-list-server.ts')],
    { DATABASE_URL: databaseUrl, PORT: String(port), ...env },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${baseUrl}/api/user/api-keys`, server.child);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { baseUrl, process: server };
}

export interface BuiltStack {
  build: Build;
  /** http://127.0.0.1:PORT of the API */
  baseUrl: string;
  environment: BenchEnvironment;
  /** What both processes run with: production settings, the ports, and the `env` given. */
  env: Record<string, string>;
  api: ServerProcess;
  worker?: ServerProcess;
  /** Starts the build's worker (when it was not started with the API), answering once started. */
  startWorker(env?: Record<string, string>): Promise<ServerProcess>;
  /** Stops both, drops the database and deletes the run's Redis keys. */
  close(): Promise<void>;
}

/**
 * A build's API (and its worker, unless `worker` is false) in processes of their own with production settings, as
 * deployed, against a fresh database migrated by that build and a Redis prefix of its own: two builds side by side
 * never share data. `apiArguments` are Node options for the API process.
 */
export async function startBuiltStack(
  build: Build,
  options: { env?: Record<string, string>; worker?: boolean; apiArguments?: string[]; stopSignal?: NodeJS.Signals } = {},
): Promise<BuiltStack> {
  const environment = await createBenchEnvironment({ migrate: build.migrate });
  const [apiPort, workerPort] = [await freePort(), await freePort()];
  const env = {
    ...productionEnv(environment),
    PORT: String(apiPort),
    WORKER_PORT: String(workerPort),
    ...options.env,
  };
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const processes: ServerProcess[] = [];
  const close = async () => {
    await Promise.allSettled(processes.map((server) => server.stop()));
    await environment.clean();
  };
  const startWorker = async (extra: Record<string, string> = {}) => {
    const worker = startServer(
      [...nodeArguments('worker', build), build.workerEntry],
      { ...env, ...extra },
      'SIGTERM',
      build.root,
    );
    processes.push(worker);
    await waitForHttp(`http://127.0.0.1:${workerPort}/api/health`, worker.child);
    return worker;
  };
  try {
    const api = startServer(
      [...(options.apiArguments ?? nodeArguments('api', build)), build.apiEntry],
      env,
      options.stopSignal ?? 'SIGTERM',
      build.root,
    );
    processes.push(api);
    await waitForHttp(`${baseUrl}/api/health`, api.child);
    const worker = options.worker === false ? undefined : await startWorker();
    return { build, baseUrl, environment, env, api, worker, startWorker, close };
  } catch (error) {
    await close();
    throw error;
  }
}
