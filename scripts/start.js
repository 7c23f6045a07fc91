#!/usr/bin/env node
// Local all-in-one start: builds if the sources changed since the last build, finds (or starts) the database and
// picks the queue backend, prepares the database, then runs the API and one worker as child processes. Ctrl-C,
// SIGINT or SIGTERM (to this process, or to the `npm start` above it, which forwards them: package.json's `exec`
// makes this process npm's child) is passed to both, which drain and exit; if one dies, the other is stopped too.
// An embedded PostgreSQL started here is stopped after both.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { localServices } = require('./local-services');
const { alive } = require('./processes');

const ROOT = path.join(__dirname, '..');
const apps = { api: 'dist/apps/api/src/main.js', worker: 'dist/apps/worker/src/main.js' };
/** Written after a successful build, dated when that build started. */
const BUILT = path.join(ROOT, 'dist', '.built');
const SOURCES = ['apps', 'libs', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];

/** Whether any source file is newer than `since` (ms). */
function changedSince(since, entries = SOURCES.map((entry) => path.join(ROOT, entry))) {
  return entries.some((entry) => {
    const stat = fs.statSync(entry, { throwIfNoEntry: false });
    if (!stat) return false;
    if (!stat.isDirectory()) return stat.mtimeMs > since;
    return changedSince(
      since,
      fs.readdirSync(entry).map((name) => path.join(entry, name)),
    );
  });
}

/** Builds unless the last build is newer than every source (a rebuild takes 10-30 s). */
async function buildIfChanged() {
  const builtAt = fs.statSync(BUILT, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (!changedSince(builtAt) && Object.values(apps).every((entry) => fs.existsSync(path.join(ROOT, entry)))) return;
  console.log('Building (the sources changed since the last build)...');
  const started = new Date();
  const build = spawn(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const stop = (signal) => build.kill(signal);
  process.on('SIGINT', stop).on('SIGTERM', stop);
  const [code, signal] = await new Promise((resolve) => build.once('exit', (...result) => resolve(result)));
  process.off('SIGINT', stop).off('SIGTERM', stop);
  if (signal) process.exit(1);
  if (code !== 0) throw new Error(`The build failed (exit ${code}); see above.`);
  fs.writeFileSync(BUILT, '');
  fs.utimesSync(BUILT, started, started);
}

/** The parent of `pid` and its command name (Linux's /proc), or undefined where that cannot be read. */
function processOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      parent: Number(fields[1]) || undefined,
      command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    };
  } catch {
    return undefined;
  }
}

const SHELLS = new Set(['sh', 'dash', 'bash', 'ash', 'zsh', 'busybox']);

/**
 * Calls `onGone` once the process that started this one is gone. `npm start` execs this in place of the shell npm
 * runs scripts with, so npm is the parent and the SIGINT or SIGTERM npm forwards reaches this process (a shell
 * waiting for its command passes neither on). Run through a shell all the same (`npm run start` from an older
 * package.json, or `sh -c`), the shell is watched and npm above it too: the shell outlives neither npm's SIGKILL.
 */
function watchStarter(onGone) {
  const parent = process.ppid;
  const watched = [parent];
  const shell = processOf(parent);
  if (process.env.npm_lifecycle_event && shell && SHELLS.has(shell.command)) {
    const npm = shell.parent;
    if (npm && npm > 1) watched.push(npm);
  }
  const timer = setInterval(() => {
    if (process.ppid !== parent || !watched.every(alive)) {
      clearInterval(timer);
      onGone();
    }
  }, 250);
  timer.unref();
}

async function main() {
  // Until the apps run, a starter that is gone is handled as SIGTERM to this process: it ends a build in progress,
  // and before and after it ends this process (an embedded PostgreSQL is then stopped by its watchdog).
  let onStarterGone = () => process.kill(process.pid, 'SIGTERM');
  watchStarter(() => onStarterGone());
  await buildIfChanged();
  const services = await localServices();
  if (services.line) console.log(services.line);
  Object.assign(process.env, services.env);
  // Loaded after the environment is settled: the build's configuration reads it.
  const { migrate } = require('./migrate');
  try {
    await migrate();
  } catch (error) {
    await services.stop();
    throw error;
  }
  const children = Object.entries(apps).map(([name, entry]) => {
    // Locally nothing balances traffic, so there is nothing to drain before stopping.
    // Readable lines at a terminal; JSON when the output goes to a file or a collector.
    const env = {
      ...process.env,
      SHUTDOWN_DRAIN_SECONDS: process.env.SHUTDOWN_DRAIN_SECONDS ?? '0',
      LOG_FORMAT: process.env.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
    };
    // The IPC channel tells the child when this process is gone, even by SIGKILL (libs/platform run-process.ts).
    const child = spawn(process.execPath, [path.join(ROOT, entry)], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      env,
    });
    child.on('exit', (code, signal) => {
      console.log(`${name} exited (${signal ?? code}).`);
      stopAll('SIGTERM');
      if (children.every((other) => other.exitCode !== null || other.signalCode !== null)) {
        const code = children.some((other) => other.exitCode) ? 1 : 0;
        void services.stop().finally(() => process.exit(code));
      }
    });
    return child;
  });

  let stopping = false;
  function stopAll(signal) {
    if (stopping) return;
    stopping = true;
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
  // A terminal's Ctrl-C reaches the children directly (same process group); forward it anyway for
  // supervisors that signal only this process.
  process.on('SIGINT', () => stopAll('SIGINT'));
  process.on('SIGTERM', () => stopAll('SIGTERM'));
  onStarterGone = () => {
    console.log('npm start was stopped; stopping the API and the worker.');
    stopAll('SIGTERM');
  };
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exit(1);
});
