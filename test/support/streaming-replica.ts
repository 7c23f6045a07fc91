import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

/** The newest PostgreSQL server binaries installed on the machine (Debian's layout), if any. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'pg_basebackup')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface StreamingPair {
  primaryUrl: string;
  replicaUrl: string;
  /** Runs one statement on the replica (or the primary) and returns its rows. */
  onReplica<Row>(sql: string): Promise<Row[]>;
  onPrimary<Row>(sql: string, values?: unknown[]): Promise<Row[]>;
  /** Waits until the replica has replayed everything the primary has written so far; returns that position. */
  caughtUp(timeoutMs?: number): Promise<string>;
  stopReplica(): void;
  remove(): void;
}

/**
 * A private primary and a `pg_basebackup` standby streaming from it, each on a free loopback port with its data in a
 * temporary directory; the machine's own cluster is never touched. As root, the servers run as `postgres` (initdb
 * refuses root). `remove` stops both and deletes the directory.
 */
export async function startStreamingPair(binaries: string, database: string): Promise<StreamingPair> {
  const directory = mkdtempSync(join(tmpdir(), 'read-replicas-'));
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? Number(execFileSync('id', ['-u', 'postgres']).toString().trim()) : undefined;
  if (owner !== undefined) chownSync(directory, owner, owner);
  const run = (program: string, args: string[]) => {
    const [command, commandArgs] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(binaries, program), ...args]]
      : [join(binaries, program), args];
    const result = spawnSync(command, commandArgs, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${program} failed: ${result.stderr || result.stdout || result.error}`);
  };
  const primaryData = join(directory, 'primary');
  const replicaData = join(directory, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const serverOptions = (port: number) =>
    `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${directory} -c fsync=off -c full_page_writes=off`;
  const started: string[] = [];
  const stop = (data: string) => {
    if (!started.includes(data)) return;
    started.splice(started.indexOf(data), 1);
    run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
  };
  try {
    run('initdb', ['-D', primaryData, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    // Replication connections over loopback, for pg_basebackup and the standby.
    appendFileSync(join(primaryData, 'pg_hba.conf'), '\nhost replication postgres 127.0.0.1/32 trust\n');
    run('pg_ctl', [
      'start',
      '-D',
      primaryData,
      '-w',
      '-l',
      join(directory, 'primary.log'),
      '-o',
      serverOptions(primaryPort),
    ]);
    started.push(primaryData);
    const primaryAdmin = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
    const admin = new Client({ connectionString: primaryAdmin });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaData,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    run('pg_ctl', [
      'start',
      '-D',
      replicaData,
      '-w',
      '-l',
      join(directory, 'replica.log'),
      '-o',
      serverOptions(replicaPort),
    ]);
    started.push(replicaData);
  } catch (error) {
    [replicaData, primaryData].forEach(stop);
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/${database}`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/${database}`;
  const once = async <Row>(url: string, sql: string, values: unknown[] = []): Promise<Row[]> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql, values)).rows as Row[];
    } finally {
      await client.end();
    }
  };
  const pair: StreamingPair = {
    primaryUrl,
    replicaUrl,
    onReplica: (sql) => once(replicaUrl, sql),
    onPrimary: (sql, values) => once(primaryUrl, sql, values),
    async caughtUp(timeoutMs = 20_000) {
      const [{ target }] = await pair.onPrimary<{ target: string }>(`SELECT pg_current_wal_lsn()::text AS target`);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [{ done }] = await once<{ done: boolean }>(
          replicaUrl,
          `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done`,
          [target],
        );
        if (done) return target;
        if (Date.now() > deadline) throw new Error(`the replica did not replay ${target} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stopReplica: () => stop(replicaData),
    remove() {
      [replicaData, primaryData].forEach(stop);
      rmSync(directory, { recursive: true, force: true });
    },
  };
  return pair;
}
