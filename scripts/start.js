#!/usr/bin/env node
// Local all-in-one start: prepares the database, then runs the API and one worker as child processes.
// Ctrl-C (or SIGTERM) is passed to both, which drain and exit; if one dies, the other is stopped too.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { migrate } = require('./migrate');

const apps = { api: 'dist/apps/api/src/main.js', worker: 'dist/apps/worker/src/main.js' };

async function main() {
  await migrate();
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
        process.exit(children.some((other) => other.exitCode) ? 1 : 0);
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
