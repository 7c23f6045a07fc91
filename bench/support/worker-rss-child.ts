/**
 * Child process of bench/worker-rss.ts: extracts one PDF once through runExtractionInThread (compiled JS, as a
 * deployed worker runs it) and prints one JSON line with its memory figures. Usage: worker-rss-child.ts <pdf>
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR } from './pdf-fixtures';

type ExtractionLib = typeof import('@app/extraction');

const SAMPLE_INTERVAL_MS = 50;
const MIB = 1024 * 1024;

function statusField(pid: number | 'self', field: string): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined; // the process has gone
  }
}

/** Pids of this process's children (pdftotext), from every thread's children list. */
function childPids(): number[] {
  const pids: number[] = [];
  for (const thread of readdirSync('/proc/self/task')) {
    try {
      const list = readFileSync(`/proc/self/task/${thread}/children`, 'utf8').trim();
      if (list) pids.push(...list.split(/\s+/).map(Number));
    } catch {
      // the thread ended meanwhile
    }
  }
  return pids;
}

async function main(): Promise<void> {
  const [pdfPath] = process.argv.slice(2);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const extraction = require(join(CACHE_DIR, 'extraction-js', 'index.js')) as ExtractionLib;
  const bytes = readFileSync(pdfPath);
  const baselineRss = process.memoryUsage().rss;

  let peakRss = baselineRss;
  const childPeaks = new Map<number, number>();
  const sample = () => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    for (const pid of childPids()) {
      const peak = statusField(pid, 'VmHWM');
      if (peak !== undefined) childPeaks.set(pid, Math.max(childPeaks.get(pid) ?? 0, peak));
    }
  };
  const timer = setInterval(sample, SAMPLE_INTERVAL_MS);

  const start = performance.now();
  let outcome: { characters?: number; passages?: number; error?: string };
  try {
    const document = await extraction.runExtractionInThread('pdf', bytes, { timeoutMs: 300_000 });
    outcome = { characters: document.text.length, passages: document.passages.length };
  } catch (error) {
    outcome = { error: `${(error as { code?: string }).code ?? 'error'}: ${(error as Error).message}` };
  }
  const wallMs = performance.now() - start;
  clearInterval(timer);
  sample();

  console.log(
    JSON.stringify({
      pdftotextOnPath: extraction.isPdftotextAvailable(),
      baselineRssMb: baselineRss / MIB,
      peakSampledRssMb: peakRss / MIB,
      vmHwmMb: (statusField('self', 'VmHWM') ?? 0) / MIB,
      childPeakMb: childPeaks.size > 0 ? Math.max(...childPeaks.values()) / MIB : null,
      wallMs,
      ...outcome,
    }),
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
