#!/usr/bin/env node
// `npm test`: the unit tests, the end-to-end tests, then the queue-dependent ones with the queues on PostgreSQL. Each
// part runs whatever the one before it did (a failure in one says nothing about the next), then one line per part
// says how it went and how long it took; the exit code is 1 if any part failed, so `.ci/run` still stops there.
// Ctrl-C or SIGTERM stops the part running and runs no other.
const { spawn } = require('node:child_process');

const PARTS = ['test:unit', 'test:e2e', 'test:e2e:postgres'];
// The npm that runs this script (npm_execpath), so the parts run under the same one; `npm` from PATH otherwise.
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];

let current;
let interrupted;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = signal;
    current?.kill(signal);
  });
}

/** Runs one part; resolves with its exit code (1 when a signal ended it). */
function run(part) {
  return new Promise((resolve) => {
    current = spawn(npm[0], [...npm.slice(1), 'run', part], { stdio: 'inherit' });
    current.once('error', (error) => {
      console.error(`npm test: could not run ${part}: ${error.message}`);
      resolve(1);
    });
    current.once('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
  });
}

async function main() {
  const results = [];
  for (const part of PARTS) {
    if (interrupted) break;
    const started = Date.now();
    const code = await run(part);
    results.push({ part, code, seconds: Math.round((Date.now() - started) / 1000) });
  }
  console.log('\nnpm test:');
  for (const { part, code, seconds } of results)
    console.log(`  ${part}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s`);
  for (const part of PARTS.slice(results.length)) console.log(`  ${part}: not run (${interrupted})`);
  process.exit(interrupted || results.some((result) => result.code !== 0) ? 1 : 0);
}

void main();
