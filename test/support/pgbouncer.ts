import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bench/support/processes';

/** Debian's PgBouncer, if installed (`.ci/run` installs it). */
export function pgbouncerBinary(): string | undefined {
  return ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => existsSync(path));
}

export interface Pgbouncer {
  /** `databaseUrl` with its host and port replaced by the pooler's. */
  url: string;
  /** The pooler's log so far, for a failure's message. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * A PgBouncer in transaction mode in front of the server of `databaseUrl`, on a free loopback port, its files in a
 * temporary directory that `stop` removes. `poolSize` server connections serve every client: with 1, every
 * transaction of every client runs on the same server connection, so whatever one client leaves on a connection
 * (a setting, a prepared statement) is met by the next. PgBouncer refuses to run as root; as root it runs as
 * `postgres`.
 */
export async function startPgbouncer(binary: string, databaseUrl: string, poolSize = 1): Promise<Pgbouncer> {
  const server = new URL(databaseUrl);
  const directory = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(server.username || 'postgres');
  const logFile = join(directory, 'pgbouncer.log');
  writeFileSync(join(directory, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(directory, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // The server trusts loopback; the pooler checks nothing either, and knows the one user.
      'auth_type = trust',
      `auth_file = ${join(directory, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      `logfile = ${logFile}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres']).toString().trim()));
    for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(directory, file), uid, gid);
  }
  const ini = join(directory, 'pgbouncer.ini');
  const child: ChildProcess = asRoot
    ? spawn('runuser', ['-u', 'postgres', '--', binary, ini], { stdio: 'ignore' })
    : spawn(binary, [ini], { stdio: 'ignore' });
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // runuser passes SIGTERM on to PgBouncer, which closes its connections and exits.
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(directory, { recursive: true, force: true });
  };
  // Ready when it accepts a connection; a pooler that exited (a bad setting) ends the wait with its log.
  for (;;) {
    if (child.exitCode !== null) {
      const message = log();
      await stop();
      throw new Error(`PgBouncer exited: ${message}`);
    }
    const accepting = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (accepting) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), log, stop };
}
