import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { Client } from 'pg';

/**
 * Private Postgres and Redis servers for fault runs, on their own ports and data directories, so stopping and
 * restarting them disturbs nothing else on the machine. Everything is removed on `stop`.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
    await sleep(100);
  }
}

export class PrivateRedis {
  private process?: ChildProcess;
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.resume();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, empty, as a restart without persistence would. */
  async resume(): Promise<void> {
    this.process = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    await until(async () => {
      const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined); // refused until the server is up: that is what we wait for
      try {
        await client.connect();
        return (await client.ping()) === 'PONG';
      } finally {
        client.disconnect();
      }
    }, 'Redis');
  }

  async stop(): Promise<void> {
    if (!this.process || this.process.exitCode !== null) return;
    if (this.frozen) this.thaw();
    this.process.kill('SIGKILL');
    await once(this.process, 'exit');
  }

  private frozen = false;

  /**
   * Stops the server without closing anything (SIGSTOP), as a hung or overloaded server, or one cut off by a network
   * that drops packets, looks to its clients: connections stay open and connects still complete (the kernel accepts
   * them), but nothing is answered until `thaw`.
   */
  freeze(): void {
    this.process?.kill('SIGSTOP');
    this.frozen = true;
  }

  thaw(): void {
    this.process?.kill('SIGCONT');
    this.frozen = false;
  }
}

const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';

export class PrivatePostgres {
  /** Whether this machine can run one: PostgreSQL 15's server, and root to run it as `postgres`. */
  static get available(): boolean {
    return existsSync(join(POSTGRES_BIN, 'initdb')) && process.getuid?.() === 0;
  }

  private constructor(
    readonly port: number,
    private readonly directory: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const directory = mkdtempSync(join(tmpdir(), 'fault-pg-'));
    chmodSync(directory, 0o777);
    const postgres = new PrivatePostgres(await freePort(), directory);
    // Postgres refuses to run as root: the cluster belongs to the postgres system user.
    const init = spawnSync(
      'runuser',
      ['-u', 'postgres', '--', `${POSTGRES_BIN}/initdb`, '-D', postgres.dataDirectory, '-A', 'trust', '-U', 'postgres'],
      { encoding: 'utf8' },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    await postgres.resume();
    return postgres;
  }

  private get dataDirectory(): string {
    return resolve(this.directory, 'data');
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  private control(...args: string[]): void {
    const result = spawnSync(
      'runuser',
      ['-u', 'postgres', '--', `${POSTGRES_BIN}/pg_ctl`, '-D', this.dataDirectory, ...args],
      {
        encoding: 'utf8',
      },
    );
    if (result.status !== 0) throw new Error(`pg_ctl ${args[0]} failed: ${result.stderr || result.stdout}`);
  }

  async resume(): Promise<void> {
    this.control(
      'start',
      '-w',
      '-l',
      join(this.directory, 'postgres.log'),
      '-o',
      `-p ${this.port} -k ${this.directory} -c listen_addresses=127.0.0.1`,
    );
    await until(async () => {
      const client = new Client({ connectionString: this.url() });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      } finally {
        await client.end().catch(() => undefined);
      }
    }, 'Postgres');
  }

  /** The server's processes: the postmaster and the backend and helper processes it forked. */
  private processes(): number[] {
    const postmaster = Number(readFileSync(join(this.dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
      .stdout.split('\n')
      .map((line) => Number(line.trim()))
      .filter((pid) => pid > 0);
    return [postmaster, ...children];
  }

  private frozen: number[] = [];

  /**
   * Stops every process of the server (SIGSTOP), the postmaster first so that it forks no new backend: open
   * connections stay open and new ones are accepted by the kernel, but nothing is answered until `thaw`.
   */
  freeze(): void {
    this.frozen = this.processes();
    for (const pid of this.frozen) process.kill(pid, 'SIGSTOP');
  }

  thaw(): void {
    for (const pid of this.frozen.reverse()) process.kill(pid, 'SIGCONT');
    this.frozen = [];
  }

  /** `immediate` is a crash as far as clients can tell: every connection is cut at once. */
  async halt(): Promise<void> {
    this.control('stop', '-m', 'immediate', '-w');
  }

  async remove(): Promise<void> {
    if (this.frozen.length > 0) this.thaw();
    try {
      this.control('stop', '-m', 'immediate', '-w');
    } catch {
      // already stopped
    }
    rmSync(this.directory, { recursive: true, force: true });
  }
}

/** The API or a worker, run from the build as operators run them. */
export class ServiceProcess {
  private child?: ChildProcess;
  readonly output: string[] = [];

  constructor(
    readonly name: 'api' | 'worker',
    private readonly env: Record<string, string>,
  ) {}

  start(): void {
    const file = resolve(__dirname, '../../../dist/apps', this.name, 'src/main.js');
    this.child = spawn(process.execPath, [file], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => this.output.push(...text.split('\n').filter(Boolean)));
    }
  }

  get running(): boolean {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.child || !this.running) return;
    const exited = once(this.child, 'exit');
    this.child.kill(signal);
    await exited;
  }
}
