import { spawn } from 'node:child_process';

/** Starts `app` from its sources with only `env`, and resolves with what it printed once it has exited. */
function boot(
  app: 'api' | 'worker',
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', `apps/${app}/src/main.ts`],
      { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a process started with a bad environment', () => {
  it.each(['api', 'worker'] as const)(
    'the %s exits 1 with one log line naming every bad variable, and no stack trace',
    async (app) => {
      const { code, stdout, stderr } = await boot(app, {
        NODE_ENV: 'production',
        DATABASE_URL: 'postgres://db/voice',
        REDIS_URL: 'http://cache:6379',
        PORT: 'eighty',
        APP_URL: 'https://voice.example.com',
      });
      expect(code).toBe(1);
      expect(stderr).toBe('');
      const lines = stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]) as { level: number; msg: string; stack?: unknown };
      expect(line).toMatchObject({ level: 60, context: 'Bootstrap' });
      expect(line.msg).not.toContain('\n');
      expect(line.msg).not.toMatch(/\bat .+:\d+:\d+/);
      expect(line.msg).toBe(
        'Invalid configuration: PORT: must be a number; REDIS_URL: must be a redis:// or rediss:// URL; ' +
          'ENCRYPTION_KEY: is required when NODE_ENV=production',
      );
    },
    60_000,
  );
});
