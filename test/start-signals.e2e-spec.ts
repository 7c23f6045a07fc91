import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './support/app-process';
import { testConfig } from './support/stack';
import { cpuOf, UNTIL_STALLED, waitFor, waitWhileProgressing } from './support/wait-for';

const ROOT = join(__dirname, '..');

/** The process ids pgrep finds (it exits 1 when it finds none). */
function pgrep(...selection: string[]): number[] {
  try {
    return execFileSync('pgrep', selection, { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Every process of a process group (`npm start` started as a group leader, as a terminal does). */
const group = (pgid: number) => pgrep('-g', String(pgid));
const childrenOf = (pid: number) => pgrep('-P', String(pid));

/** `npm start` against this run's database and queues, ready on both the API and the worker. */
async function npmStart(): Promise<{ npm: ChildProcess; output: string[]; api: number; worker: number }> {
  const config = testConfig();
  const [api, worker] = [await freePort(), await freePort()];
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: String(api),
      WORKER_PORT: String(worker),
      METRICS_PORT: '0',
      DATABASE_URL: config.databaseUrl,
      REDIS_URL: config.redisUrl,
      QUEUE_BACKEND: config.queueBackend,
      QUEUE_PREFIX: config.queuePrefix,
      ENCRYPTION_KEY: config.encryptionKey.toString('base64'),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'warn',
    },
  });
  const output: string[] = [];
  npm.stdout!.on('data', (chunk) => output.push(String(chunk)));
  npm.stderr!.on('data', (chunk) => output.push(String(chunk)));
  const ready = (port: number) =>
    fetch(`http://127.0.0.1:${port}/api/health/ready`).then(
      (response) => (response.ok ? true : undefined),
      () => undefined,
    );
  // A first start builds (10-60 s, more on a loaded machine); later ones find the build current. Ready however long
  // that takes, as long as its processes work at it (their CPU time advances).
  const groupCpu = () => group(npm.pid!).map(cpuOf);
  await waitWhileProgressing(
    async () => ((await ready(api)) && (await ready(worker))) || undefined,
    groupCpu,
    30_000,
    250,
  ).catch((error: Error) => {
    throw new Error(`npm start did not become ready: ${error.message}\n${output.join('')}`);
  });
  return { npm, output, api, worker };
}

/** Waits until nothing of the group runs, and says how long that took. */
async function allGone(pgid: number, output: string[]): Promise<number> {
  const started = Date.now();
  await waitFor(async () => (group(pgid).length === 0 ? true : undefined), 30_000, 100).catch(() => {
    throw new Error(
      `still running: ${execFileSync('ps', ['-o', 'pid,cmd', '-g', String(pgid)], { encoding: 'utf8' })}\n${output.join('')}`,
    );
  });
  return Date.now() - started;
}

describe('npm start stops everything it started, however it is stopped', () => {
  afterEach(() => {
    // Whatever a failed test left behind.
    for (const pid of group(lastGroup)) process.kill(pid, 'SIGKILL');
  });
  let lastGroup = 0;

  it.each<[NodeJS.Signals, string]>([
    ['SIGTERM', 'as timeout, systemd and most supervisors send it'],
    ['SIGINT', 'as the Scripts table promises (`kill -INT <npm>`)'],
  ])(
    'on %s to the npm process alone, %s',
    async (signal) => {
      const { npm, output } = await npmStart();
      lastGroup = npm.pid!;
      expect(group(npm.pid!).length).toBeGreaterThanOrEqual(4); // npm, start.js, API, worker
      process.kill(npm.pid!, signal);
      expect(await allGone(npm.pid!, output)).toBeLessThan(30_000);
    },
    UNTIL_STALLED,
  );

  it(
    'on SIGKILL to npm: what it started notices and stops',
    async () => {
      const { npm, output } = await npmStart();
      lastGroup = npm.pid!;
      // The first test's start left a current build: this one did not build again.
      expect(output.join('')).not.toContain('Building');
      process.kill(npm.pid!, 'SIGKILL');
      expect(await allGone(npm.pid!, output)).toBeLessThan(30_000);
    },
    UNTIL_STALLED,
  );

  it(
    'on SIGKILL to the start script: the API and the worker notice and stop',
    async () => {
      const { npm, output, api } = await npmStart();
      lastGroup = npm.pid!;
      // package.json's `exec`: the start script is npm's child, not a shell's.
      const start = childrenOf(npm.pid!);
      expect(start).toHaveLength(1);
      process.kill(start[0], 'SIGKILL');
      expect(await allGone(npm.pid!, output)).toBeLessThan(30_000);
      await expect(fetch(`http://127.0.0.1:${api}/api/health`)).rejects.toThrow();
    },
    UNTIL_STALLED,
  );

  it(
    'on Ctrl-C (SIGINT to the whole group)',
    async () => {
      const { npm, output } = await npmStart();
      lastGroup = npm.pid!;
      process.kill(-npm.pid!, 'SIGINT');
      expect(await allGone(npm.pid!, output)).toBeLessThan(30_000);
    },
    UNTIL_STALLED,
  );
});
