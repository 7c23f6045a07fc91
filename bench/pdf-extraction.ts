/**
 * PDF extraction throughput without poppler, against poppler's pdftotext run directly on the file.
 *
 *   PDFTOTEXT=/path/to/pdftotext node -r ts-node/register/transpile-only -r tsconfig-paths/register \
 *     bench/pdf-extraction.ts [label=root ...]
 *
 * pdftotext is the reference only: PDFTOTEXT names it (default: `pdftotext` on PATH), and every directory of PATH
 * holding a pdftotext is removed from this process's PATH first, so the extraction threads cannot find it and use
 * PDFium, as a worker on a machine without poppler does. For text-dense PDFs of 20, 100 and 300 pages and the
 * ~20 MiB PDF of bench/worker-rss.ts it times, in interleaved rounds:
 *   ref      pdftotext on the file, output piped back (the reference)
 *   pdfium   extractPdf(bytes, { engine: 'pdfium' }) from the sources (PDFium as WebAssembly, in this thread)
 *   thread   runExtractionInThread('pdf', bytes) of each build, as a worker runs it: compiled JS, a pooled thread,
 *            PDFium, normalisation, header/footer removal, passages brought back to this thread
 * Builds are checkout roots holding `dist/` (`npm run build`), each given as label=root; without any, the current
 * sources transpiled to bench/.cache/. Small PDFs: one warm-up round, then BENCH_REPETITIONS (5); the 20 MiB one:
 * BENCH_LARGE_REPETITIONS (3), the first of which also warms nothing up beyond what the small ones did.
 * Reports medians, MiB/s, pages/s and each median's throughput as a share of the reference's.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as sources from '@app/extraction';
import { buildRootsFromArguments, loadCompiledExtraction } from './support/compiled-extraction';
import { buildTextDensePdf, CACHE_DIR, cachedPdfOfSize } from './support/pdf-fixtures';
import { fixed, median, MIB, printTable, runMain, timed } from './support/report';

const PAGE_COUNTS = [20, 100, 300];
const LARGE_PDF_BYTES = 20 * MIB - 4096;
const REPETITIONS = Number(process.env.BENCH_REPETITIONS ?? 5);
const LARGE_REPETITIONS = Number(process.env.BENCH_LARGE_REPETITIONS ?? 3);
const TIMEOUT_MS = 300_000;
const PDFTOTEXT = process.env.PDFTOTEXT ?? 'pdftotext';

type ExtractionLib = Pick<typeof sources, 'runExtractionInThread' | 'closeExtractionThreads'>;

interface Method {
  label: string;
  /** Resolves with what came out: characters for pdftotext and extractPdf, passages for the threads. */
  run: (bytes: Buffer, path: string) => Promise<number>;
}

function hasPdftotext(directory: string): boolean {
  try {
    accessSync(join(directory, 'pdftotext'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Before any extraction thread starts: threads take their PATH from this process. */
function hidePdftotextFromPath(): string[] {
  const directories = (process.env.PATH ?? '').split(delimiter);
  const hidden = directories.filter((directory) => directory !== '' && hasPdftotext(directory));
  process.env.PATH = directories.filter((directory) => !hidden.includes(directory)).join(delimiter);
  return hidden;
}

/** pdftotext on the file itself, its output read from a pipe; resolves with the characters produced. */
function pdftotextDirect(path: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(PDFTOTEXT, ['-q', '-enc', 'UTF-8', path, '-'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolvePromise(Buffer.concat(chunks).toString('utf8').length)
        : reject(new Error(`pdftotext exit ${code}`)),
    );
  });
}

function buildsFromArguments(): { label: string; lib: ExtractionLib }[] {
  const given = buildRootsFromArguments();
  if (given.length === 0) return [{ label: 'sources', lib: loadCompiledExtraction() }];
  return given.map(({ label, root }) => {
    const lib = require(join(root, 'dist', 'libs', 'extraction', 'src', 'index.js')) as ExtractionLib;
    return { label, lib };
  });
}

async function main(): Promise<void> {
  const hidden = hidePdftotextFromPath();
  if (sources.isPdftotextAvailable()) throw new Error('pdftotext is still on PATH');
  const builds = buildsFromArguments();
  const methods: Method[] = [
    { label: 'ref: pdftotext on the file', run: (_bytes, path) => pdftotextDirect(path) },
    {
      label: "extractPdf engine 'pdfium'",
      run: async (bytes) => (await sources.extractPdf(bytes, { engine: 'pdfium', timeoutMs: TIMEOUT_MS })).text.length,
    },
    ...builds.map(({ label, lib }) => ({
      label: `runExtractionInThread, PDFium (${label})`,
      run: async (bytes: Buffer) =>
        (await lib.runExtractionInThread('pdf', bytes, { timeoutMs: TIMEOUT_MS })).passages.length,
    })),
  ];

  const inputs: { label: string; pages: number; bytes: Buffer; warmUp: boolean; repetitions: number }[] = [];
  for (const pages of PAGE_COUNTS) {
    inputs.push({
      label: `${pages} p`,
      pages,
      bytes: await buildTextDensePdf(pages),
      warmUp: true,
      repetitions: REPETITIONS,
    });
  }
  const large = await cachedPdfOfSize(LARGE_PDF_BYTES);
  inputs.push({
    label: `${large.pages} p`,
    pages: large.pages,
    bytes: large.bytes,
    warmUp: false,
    repetitions: LARGE_REPETITIONS,
  });

  const workDir = join(CACHE_DIR, `pdf-extraction-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  const rows: (string | number)[][] = [];
  try {
    for (const input of inputs) {
      const path = join(workDir, `${input.pages}.pdf`);
      writeFileSync(path, input.bytes);
      const times = methods.map(() => [] as number[]);
      const outputs = methods.map(() => 0);
      for (let round = input.warmUp ? 0 : 1; round <= input.repetitions; round++) {
        for (const [index, method] of methods.entries()) {
          const { ms, value } = await timed(() => method.run(input.bytes, path));
          outputs[index] = value;
          if (round > 0) times[index].push(ms);
        }
      }
      const reference = median(times[0]);
      for (const [index, method] of methods.entries()) {
        const ms = median(times[index]);
        rows.push([
          `${input.label}, ${fixed(input.bytes.length / MIB, 2)} MiB`,
          method.label,
          fixed(ms, 0),
          fixed(input.bytes.length / MIB / (ms / 1000), 2),
          fixed(input.pages / (ms / 1000), 0),
          fixed(reference / ms, 2),
          outputs[index],
        ]);
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
    await Promise.all(builds.map(({ lib }) => lib.closeExtractionThreads()));
    await sources.closeExtractionThreads();
  }

  printTable(
    `PDF extraction without poppler against pdftotext, medians (small PDFs: ${REPETITIONS} runs after 1 warm-up; ` +
      `the large one: ${LARGE_REPETITIONS} runs)`,
    ['PDF', 'method', 'ms', 'MiB/s', 'pages/s', 'throughput vs ref', 'out'],
    rows,
    [
      "throughput vs ref = median time of pdftotext run directly on the same file / the method's median time " +
        '(1.00 = as fast; the target is at least 0.33).',
      'out: characters for pdftotext (raw) and extractPdf (normalised, headers and footers removed); passages for ' +
        'the threads.',
      `Reference: ${PDFTOTEXT}; hidden from this process's PATH: ${hidden.length > 0 ? hidden.join(', ') : 'nothing'}.`,
    ],
  );
}

runMain(main);
