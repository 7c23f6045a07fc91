import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { testConfig } from './support/stack';
import { waitFor } from './support/wait-for';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

describe('Shutdown behind a load balancer', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('answers readiness 503 at once on SIGTERM, keeps serving for the drain delay, then exits', async () => {
    const config = testConfig();
    const port = await freePort();
    child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/api/src/main.ts'],
      {
        env: {
          ...process.env,
          NODE_ENV: 'test',
          PORT: String(port),
          DATABASE_URL: config.databaseUrl,
          REDIS_URL: config.redisUrl,
          QUEUE_PREFIX: config.queuePrefix,
          LOG_LEVEL: 'silent',
          ENCRYPTION_KEY: config.encryptionKey.toString('base64'),
          SHUTDOWN_DRAIN_SECONDS: '3',
        },
        stdio: 'ignore',
      },
    );
    const base = `http://127.0.0.1:${port}/api`;
    const status = (path: string) =>
      fetch(`${base}${path}`).then(
        (response) => response.status,
        () => 'refused' as const,
      );
    await waitFor(async () => ((await status('/health/ready')) === 200 ? true : undefined), 60_000, 200);

    const signalledAt = Date.now();
    child.kill('SIGTERM');
    await waitFor(async () => ((await status('/health/ready')) === 503 ? true : undefined), 2_000, 50);
    expect(Date.now() - signalledAt).toBeLessThan(2_000);
    // Still serving while the balancer notices: liveness and ordinary routes answer.
    expect(await status('/health')).toBe(200);
    expect(await status('/user/me')).toBe(401);

    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(3_000);
    // Nest re-raises the signal once it has closed everything: a clean exit "by SIGTERM", not a crash.
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await status('/health')).toBe('refused');
  }, 90_000);
});
