/**
 * Runs every benchmark in its own Node process, one after another, and prints the machine they ran on.
 *
 *   npm run bench
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/run-all.ts [name ...]
 *
 * Names select benchmarks (pdf-extraction, document-latency, crawl, worker-rss); none runs them all.
 * Needs Postgres on 127.0.0.1:5432 (user postgres, trust), redis-server on PATH (each benchmark starts a Redis of its own on a free port; BENCH_REDIS_URL names another) and pdftotext on PATH.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fixed, nowMs } from './support/report';

const BENCHMARKS = ['pdf-extraction', 'document-latency', 'crawl', 'worker-rss'];
/** No single benchmark may run longer than this; it is killed and counted as failed. */
const BENCHMARK_DEADLINE_MS = 8 * 60_000;

/** First line a tool prints about its version (pdftotext prints it on stderr). */
function versionOf(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.error) return `${command}: not found`;
  return `${result.stdout}${result.stderr}`.trim().split('\n')[0];
}

/** Share of CPU time the whole machine spent busy over one second, from /proc/stat. */
async function machineBusyShare(): Promise<number> {
  const read = () => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0); // idle + iowait
    return { idle, total: fields.reduce((sum, value) => sum + value, 0) };
  };
  const before = read();
  await sleep(1000);
  const after = read();
  return 1 - (after.idle - before.idle) / Math.max(1, after.total - before.total);
}

function runBenchmark(name: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', join(__dirname, `${name}.ts`)],
      { cwd: join(__dirname, '..'), stdio: 'inherit' },
    );
    // SIGINT lets the benchmark drop its database and Redis keys before it exits; SIGKILL follows if it hangs.
    const timer = setTimeout(() => {
      console.error(`${name}: still running after ${BENCHMARK_DEADLINE_MS / 60_000} min, stopping it`);
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
    }, BENCHMARK_DEADLINE_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function main(): Promise<void> {
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !BENCHMARKS.includes(name));
  if (unknown.length > 0)
    throw new Error(`Unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.join(', ')}`);
  const names = selected.length > 0 ? selected : BENCHMARKS;

  const busy = await machineBusyShare();
  console.log(
    [
      `# Benchmarks, ${new Date().toISOString()}`,
      `CPU: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}, memory ${fixed(totalmem() / 2 ** 30, 1)} GiB`,
      `Node ${process.version}; ${versionOf('psql', ['--version'])}; ${versionOf('redis-server', ['--version'])}`,
      versionOf('pdftotext', ['-v']),
      `At start: CPU ${fixed(busy * 100, 0)}% busy over 1 s; load average ${loadavg()
        .map((value) => fixed(value, 2))
        .join(' ')}`,
    ].join('\n'),
  );
  if (busy > 0.25) console.log('Warning: something else is using the CPU; figures will be slower and noisier.');

  const failed: string[] = [];
  const start = nowMs();
  for (const name of names) {
    const benchmarkStart = nowMs();
    const code = await runBenchmark(name);
    console.log(
      `(${name}: ${fixed((nowMs() - benchmarkStart) / 1000, 1)} s${code === 0 ? '' : `, exit code ${code}`})`,
    );
    if (code !== 0) failed.push(name);
  }
  const outcome = failed.length > 0 ? `failed: ${failed.join(', ')}` : 'all completed';
  console.log(`\nTotal ${fixed((nowMs() - start) / 1000, 1)} s for ${names.length} benchmark(s); ${outcome}`);
  if (failed.length > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
