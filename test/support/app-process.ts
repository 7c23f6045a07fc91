import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { testConfig } from './stack';
import { cpuOf, waitWhileProgressing } from './wait-for';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** The API (or a worker) as its own process, from sources, against this run's database and Redis, output kept. */
export class AppProcess {
  readonly output: string[] = [];
  private constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string,
  ) {}

  /** `preload`: modules the process requires before its main one (after ts-node), e.g. a statement recorder. */
  static async start(
    env: Record<string, string> = {},
    app: 'api' | 'worker' = 'api',
    preload: string[] = [],
  ): Promise<AppProcess> {
    const config = testConfig();
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        ...preload.flatMap((module) => ['-r', module]),
        `apps/${app}/src/main.ts`,
      ],
      {
        env: {
          ...process.env,
          NODE_ENV: 'test',
          PORT: String(port),
          WORKER_PORT: String(port),
          METRICS_PORT: '0',
          DATABASE_URL: config.databaseUrl,
          REDIS_URL: config.redisUrl,
          QUEUE_BACKEND: config.queueBackend,
          QUEUE_PREFIX: config.queuePrefix,
          // The run's suites share one count per address (127.0.0.1): the same generous limit as in-process stacks.
          RATE_LIMIT_PER_MINUTE: String(config.rateLimitPerMinute),
          ACCOUNT_MAX_CONCURRENT_CALLS: String(config.accountMaxConcurrentCalls),
          REDIS_COMMAND_TIMEOUT_MS: String(config.dependencyTimeouts.redisCommandMs),
          LOG_LEVEL: 'silent',
          ENCRYPTION_KEY: config.encryptionKey.toString('base64'),
          OUTBOUND_ALLOW_LOOPBACK: 'true',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const api = new AppProcess(child, `http://127.0.0.1:${port}/api`);
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => api.output.push(text));
    }
    const ready = () =>
      fetch(`${api.baseUrl}/health/ready`).then(
        (response) => (response.status === 200 ? true : undefined),
        () => undefined,
      );
    // Ready once it answers, however long compiling the sources takes on a loaded machine, as long as it works at it
    // (its CPU time advances); one that exits, or stalls, is not left running behind the failed test.
    const readyOrExited = async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `${app} exited (${child.signalCode ?? child.exitCode}) before it was ready:\n${api.output.join('')}`,
        );
      return ready();
    };
    await waitWhileProgressing(readyOrExited, () => cpuOf(child.pid!), 30_000, 200).catch(async (error: unknown) => {
      await api.stop();
      throw error;
    });
    return api;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** Starts the processes together, keeping each that started; fails if any did not. */
export async function startAll(into: AppProcess[], starts: (() => Promise<AppProcess>)[]): Promise<void> {
  const results = await Promise.allSettled(starts.map((start) => start()));
  for (const result of results) if (result.status === 'fulfilled') into.push(result.value);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}
