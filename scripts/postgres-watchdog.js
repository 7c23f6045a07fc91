#!/usr/bin/env node
// Stops the embedded PostgreSQL when the process that started it is gone without stopping it (killed, crashed):
// postgres does not notice its parent's death, and would otherwise keep running and keep its data directory locked.
// Usage: postgres-watchdog.js <parent pid> <postgres pid>. Runs detached, in its own process group.
const { alive } = require('./processes');

const [parent, postgres] = process.argv.slice(2).map(Number);
const CHECK_MS = 500;

const timer = setInterval(() => {
  if (!alive(postgres)) process.exit(0);
  if (alive(parent)) return;
  clearInterval(timer);
  // Fast shutdown: sessions end, the data stays consistent on disk.
  try {
    process.kill(postgres, 'SIGINT');
  } catch {
    process.exit(0);
  }
  const waiting = setInterval(() => {
    if (!alive(postgres)) process.exit(0);
  }, 100);
  // Should it hang, an immediate shutdown (recovery runs at the next start).
  setTimeout(() => {
    clearInterval(waiting);
    if (alive(postgres)) process.kill(postgres, 'SIGQUIT');
    process.exit(0);
  }, 30_000).unref();
}, CHECK_MS);
