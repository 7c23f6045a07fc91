/** Small helpers shared by the benchmarks: timing, order statistics and a plain-text table. */
import { cpus, loadavg } from 'node:os';

export function nowMs(): number {
  return performance.now();
}

export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Linear interpolation between closest ranks (the same definition as numpy's default). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export function fixed(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

export const MIB = 1024 * 1024;

/** `--name value` or `--name=value`, else the environment variable, else the default. */
export function setting(flag: string, variable: string, fallback: number): number {
  const index = process.argv.findIndex((argument) => argument === `--${flag}` || argument.startsWith(`--${flag}=`));
  const text =
    index < 0
      ? process.env[variable]
      : process.argv[index].includes('=')
        ? process.argv[index].split('=')[1]
        : process.argv[index + 1];
  const value = Number(text ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${flag} (${variable}) must be a positive number`);
  return value;
}

/** Prints a titled table with right-aligned columns (first column left-aligned). */
export function printTable(title: string, headers: string[], rows: (string | number)[][], notes: string[] = []): void {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ');
  const out = [`\n## ${title}`, line(headers), widths.map((width) => '-'.repeat(width)).join('  ')];
  for (const row of cells.slice(1)) out.push(line(row));
  for (const note of notes) out.push(note);
  console.log(out.join('\n'));
}

const interruptCleanups = new Set<() => Promise<void>>();

/** Registers work to do (drop a database, delete Redis keys) if the benchmark is interrupted; returns its undo. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  interruptCleanups.add(cleanup);
  return () => interruptCleanups.delete(cleanup);
}

let interruption: Promise<void> | undefined;

function interrupted(signal: NodeJS.Signals): void {
  interruption ??= (async () => {
    console.error(`${signal}: cleaning up`);
    // Newest first: a stack stops its apps before its database is dropped.
    while (interruptCleanups.size > 0) {
      const cleanup = [...interruptCleanups].pop()!;
      interruptCleanups.delete(cleanup);
      await cleanup().catch((error: unknown) => console.error(error));
    }
    process.exit(130);
  })();
}

/**
 * Runs a benchmark's main function and exits when it is done (open sockets cannot keep it alive), with exit
 * code 1 on failure. SIGINT and SIGTERM run the registered cleanups first.
 */
function loadAverageNow(): string {
  return loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
}

/** `--before <commit>`, `--before=<commit>` or BENCH_BEFORE: the build to compare with (support/other-build.ts). */
export function beforeCommit(): string | undefined {
  const index = process.argv.findIndex((argument) => argument === '--before' || argument.startsWith('--before='));
  if (index < 0) return process.env.BENCH_BEFORE || undefined;
  const value = process.argv[index].includes('=') ? process.argv[index].split('=')[1] : process.argv[index + 1];
  if (!value || value.startsWith('--')) throw new Error('--before needs a commit');
  return value;
}

/** Whether the run was asked for a second build (`--before`, BENCH_BEFORE or BENCH_OTHER_API). */
export function otherBuildAsked(): boolean {
  return beforeCommit() !== undefined || Boolean(process.env.BENCH_OTHER_API);
}

/**
 * `comparesBuilds`: the benchmark runs a second build beside this one when asked (support/other-build.ts), or reads
 * `--before` its own way; any other refuses to start when asked, rather than print one build's figures as a
 * comparison.
 */
export function runMain(main: () => Promise<void>, options: { comparesBuilds?: boolean } = {}): void {
  if (!options.comparesBuilds && otherBuildAsked()) {
    console.error(
      `${process.argv[1]} runs this build only: it takes no --before, BENCH_BEFORE or BENCH_OTHER_API. ` +
        'Those that compare two builds: bench/call-ingestion.ts, bench/runtime-events.ts, bench/list-throughput.ts ' +
        '(and bench/search.ts, with a commit\'s search statement).',
    );
    process.exit(2);
  }
  const loadAtStart = loadAverageNow();
  // `on`, not `once`: Nest's shutdown hooks re-raise the signal after closing an app, which must not end the
  // process before the cleanups have run.
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  main().then(
    async () => {
      await interruption;
      // Figures from a busy machine are not a quiet machine's: every run says which it had.
      console.log(
        `\nLoad average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAverageNow()}; ${cpus().length} cores.`,
      );
      process.exit(process.exitCode ?? 0);
    },
    async (error: unknown) => {
      if (interruption) return interruption; // failures caused by the shutdown itself are not news
      console.error(error);
      process.exit(1);
    },
  );
}
