/**
 * Peak memory of a worker process extracting a ~20 MiB text-dense PDF (the largest upload the API accepts).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/worker-rss.ts
 *
 * Spawns a fresh Node process (ts-node, like this script) that runs runExtractionInThread('pdf', bytes,
 * { timeoutMs: 300000 }) once, with the extraction library compiled to JavaScript as in a deployed worker:
 *   pdftotext  PATH as usual, so the auto engine uses poppler's pdftotext
 *   pdfium     PATH holding only a link to node, so pdftotext is not found and PDFium (WebAssembly) is used
 * The child samples process.memoryUsage().rss every 50 ms and reads VmHWM from /proc/self/status at the end
 * (both include the extraction thread, which shares the process); pdftotext runs as its own process, whose
 * VmHWM is sampled separately. The PDF is generated once with pdf-lib and cached in bench/.cache/.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCompiledExtraction } from './support/compiled-extraction';
import { cachedPdfOfSize } from './support/pdf-fixtures';
import { fixed, MIB, nowMs, printTable, runMain } from './support/report';

const TARGET_BYTES = 20 * MIB - 4096;
const CHILD_DEADLINE_MS = 330_000;
const REPO_ROOT = join(__dirname, '..');

interface ChildReport {
  pdftotextOnPath: boolean;
  baselineRssMb: number;
  peakSampledRssMb: number;
  vmHwmMb: number;
  childPeakMb: number | null;
  wallMs: number;
  characters?: number;
  passages?: number;
  error?: string;
}

function runChild(pdfPath: string, path: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        join(__dirname, 'support', 'worker-rss-child.ts'),
        pdfPath,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, PATH: path }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const lastLine = Buffer.concat(output).toString('utf8').trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`child exited with ${code ?? signal}: ${lastLine}`));
      resolve(JSON.parse(lastLine) as ChildReport);
    });
  });
}

async function main(): Promise<void> {
  const buildStart = nowMs();
  const pdf = await cachedPdfOfSize(TARGET_BYTES);
  const buildMs = nowMs() - buildStart;
  loadCompiledExtraction(); // writes the compiled copy the child loads

  // A PATH whose only entry holds a link to node: pdftotext cannot be found there.
  const nodeOnly = mkdtempSync(join(tmpdir(), 'va-bench-path-'));
  symlinkSync(process.execPath, join(nodeOnly, 'node'));
  const rows: (string | number)[][] = [];
  try {
    for (const [engine, path] of [
      ['pdftotext', process.env.PATH ?? ''],
      ['pdfium', nodeOnly],
    ] as const) {
      const report = await runChild(pdf.path, path);
      const expected = engine === 'pdftotext';
      if (report.pdftotextOnPath !== expected) throw new Error(`${engine} run: pdftotext on PATH = ${!expected}`);
      rows.push([
        engine,
        fixed(report.baselineRssMb, 0),
        fixed(report.peakSampledRssMb, 0),
        fixed(report.vmHwmMb, 0),
        report.childPeakMb === null ? '-' : fixed(report.childPeakMb, 0),
        fixed(report.wallMs / 1000, 1),
        report.error ?? report.characters ?? '-',
        report.passages ?? '-',
      ]);
    }
  } finally {
    rmSync(nodeOnly, { recursive: true, force: true });
  }

  printTable(
    `Worker peak memory, one ${fixed(pdf.bytes.length / MIB, 2)} MiB PDF of ${pdf.pages} text-dense pages`,
    ['engine', 'RSS before MiB', 'peak RSS MiB', 'VmHWM MiB', 'pdftotext MiB', 'wall s', 'chars', 'passages'],
    rows,
    [
      'RSS before: the child with ts-node loaded and the PDF read, before extraction. Peak RSS: sampled every 50 ms.',
      "VmHWM: the kernel's high-water mark of the child process (thread included). pdftotext MiB: its own process.",
      `PDF ${buildMs > 1000 ? `generated in ${fixed(buildMs / 1000, 1)} s` : 'read from bench/.cache/'}.`,
    ],
  );
}

runMain(main);
