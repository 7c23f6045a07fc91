#!/usr/bin/env node
// Local all-in-one start: finds (or starts) the database and picks the queue backend, prepares the database,
// then runs the API and one worker as child processes. Ctrl-C (or SIGTERM) is passed to both, which drain and
// exit; if one dies, the other is stopped too. An embedded PostgreSQL started here is stopped after both.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { localServices } = require('./local-services');

const apps = { api: 'dist/apps/api/src/main.js', worker: 'dist/apps/worker/src/main.js' };

async function main() {
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
    const child = spawn(process.execPath, [path.join(__dirname, '..', entry)], { stdio: 'inherit', env });
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
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exit(1);
});
