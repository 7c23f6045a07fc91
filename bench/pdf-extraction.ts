/**
 * PDF extraction throughput against poppler's pdftotext run directly on the file.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/pdf-extraction.ts
 *
 * For text-dense PDFs of 20, 100 and 300 pages it times, in interleaved rounds after one warm-up round:
 *   ref      pdftotext on the file, output piped back (the reference)
 *   pdfium   extractPdf(bytes, { engine: 'pdfium' })      (PDFium as WebAssembly, in this thread: the default
 *                                                          where pdftotext is not installed)
 *   wrapper  extractPdf(bytes, { engine: 'pdftotext' })   (pdftotext via stdin, normalisation, header/footer filter)
 *   thread   runExtractionInThread('pdf', bytes)          (as deployed: compiled JS, thread start, auto engine,
 *                                                          normalisation, passage splitting)
 *   thread*  the same from the TypeScript sources through ts-node (what tests and this script run)
 * and reports medians, MiB/s, pages/s and each median's ratio to the reference's.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sources from '@app/extraction';
import { loadCompiledExtraction } from './support/compiled-extraction';
import { buildTextDensePdf, CACHE_DIR } from './support/pdf-fixtures';
import { fixed, median, MIB, printTable, runMain, timed } from './support/report';

const PAGE_COUNTS = [20, 100, 300];
const REPETITIONS = Number(process.env.BENCH_REPETITIONS ?? 5);
const TIMEOUT_MS = 120_000;

interface Method {
  label: string;
  run: (bytes: Buffer, path: string) => Promise<number>;
}

/** pdftotext on the file itself, its output read from a pipe; resolves with the characters produced. */
function pdftotextDirect(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdftotext', ['-q', '-enc', 'UTF-8', path, '-'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(chunks).toString('utf8').length) : reject(new Error(`pdftotext exit ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  if (!sources.isPdftotextAvailable()) throw new Error('pdftotext is not on PATH; install poppler-utils');
  const compiled = loadCompiledExtraction();
  const methods: Method[] = [
    { label: 'ref: pdftotext on the file', run: (_bytes, path) => pdftotextDirect(path) },
    {
      label: "extractPdf engine 'pdfium'",
      run: async (bytes) => (await sources.extractPdf(bytes, { engine: 'pdfium', timeoutMs: TIMEOUT_MS })).text.length,
    },
    {
      label: "extractPdf engine 'pdftotext'",
      run: async (bytes) =>
        (await sources.extractPdf(bytes, { engine: 'pdftotext', timeoutMs: TIMEOUT_MS })).text.length,
    },
    {
      label: 'runExtractionInThread (JS)',
      run: async (bytes) => (await compiled.runExtractionInThread('pdf', bytes, { timeoutMs: TIMEOUT_MS })).text.length,
    },
    {
      label: 'runExtractionInThread (ts-node)',
      run: async (bytes) => (await sources.runExtractionInThread('pdf', bytes, { timeoutMs: TIMEOUT_MS })).text.length,
    },
  ];

  const workDir = join(CACHE_DIR, `pdf-extraction-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  const rows: (string | number)[][] = [];
  try {
    for (const pages of PAGE_COUNTS) {
      const bytes = await buildTextDensePdf(pages);
      const path = join(workDir, `${pages}.pdf`);
      writeFileSync(path, bytes);
      const times = methods.map(() => [] as number[]);
      const characters = methods.map(() => 0);
      for (let round = 0; round <= REPETITIONS; round++) {
        for (const [index, method] of methods.entries()) {
          const { ms, value } = await timed(() => method.run(bytes, path));
          characters[index] = value;
          if (round > 0) times[index].push(ms); // round 0 is the warm-up
        }
      }
      const reference = median(times[0]);
      for (const [index, method] of methods.entries()) {
        const ms = median(times[index]);
        rows.push([
          `${pages} p, ${fixed(bytes.length / MIB, 2)} MiB`,
          method.label,
          fixed(ms, 0),
          fixed(bytes.length / MIB / (ms / 1000), 2),
          fixed(pages / (ms / 1000), 0),
          `${fixed(ms / reference, 2)}x`,
          characters[index],
        ]);
      }
    }

    // The fixed cost of an extraction in a pooled thread: hand over, read a one-line TXT, post the result back.
    const tiny = Buffer.from('One line of text.\n');
    const threadStart = { js: [] as number[], tsNode: [] as number[] };
    for (let round = 0; round <= REPETITIONS; round++) {
      const js = await timed(() => compiled.runExtractionInThread('txt', tiny, { timeoutMs: TIMEOUT_MS }));
      const tsNode = await timed(() => sources.runExtractionInThread('txt', tiny, { timeoutMs: TIMEOUT_MS }));
      if (round === 0) continue;
      threadStart.js.push(js.ms);
      threadStart.tsNode.push(tsNode.ms);
    }

    printTable(
      `PDF extraction, median of ${REPETITIONS} runs after 1 warm-up`,
      ['PDF', 'method', 'ms', 'MiB/s', 'pages/s', 'time vs ref', 'chars out'],
      rows,
      [
        'time vs ref = median time / median time of pdftotext run directly on the same file (1.00x = as fast).',
        'chars out: pdftotext raw output for ref; normalised text (repeated header/footer lines removed) otherwise.',
        `Fixed cost of a pooled thread (one-line TXT through runExtractionInThread), median: ` +
          `${fixed(median(threadStart.js), 0)} ms compiled JS, ${fixed(median(threadStart.tsNode), 0)} ms ts-node.`,
      ],
    );
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

runMain(main);
