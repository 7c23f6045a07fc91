import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ExtractionError, isExtractionErrorCode, processingTimeoutError } from './extraction.error';
import type { ExtractionThreadInput, ExtractionThreadOutcome } from './extraction-thread.protocol';
import type { DeclaredFileType, ExtractedDocument } from './extraction.types';

export interface ThreadExtractionOptions {
  /** Hard limit; the thread is terminated when it runs out. */
  timeoutMs: number;
  /** Heap limit of the thread; exceeding it ends the extraction with `too_large`. */
  maxMemoryMb?: number;
}

const DEFAULT_MAX_MEMORY_MB = 1024;
/** The thread stops its own child processes a little early, so they are not left running after termination. */
const MAX_REPORTING_MARGIN_MS = 500;

/**
 * Runs extractDocument in a worker thread, so parsing a large document cannot block the caller's event
 * loop (a BullMQ worker must keep renewing its job lock) and cannot exceed a time or memory budget.
 * ExtractionErrors raised in the thread are re-thrown here with the same code and message.
 */
export async function runExtractionInThread(
  type: DeclaredFileType,
  bytes: Buffer,
  options: ThreadExtractionOptions,
): Promise<ExtractedDocument> {
  const { timeoutMs, maxMemoryMb = DEFAULT_MAX_MEMORY_MB } = options;
  if (!(timeoutMs > 0) || !(maxMemoryMb > 0)) throw new RangeError('timeoutMs and maxMemoryMb must be positive');
  const worker = startThread(type, bytes, timeoutMs, maxMemoryMb);
  return new Promise<ExtractedDocument>((resolve, reject) => {
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      finish();
    };
    const timer = setTimeout(() => settle(() => reject(processingTimeoutError(timeoutMs))), timeoutMs);

    worker.on('message', (outcome: ExtractionThreadOutcome) =>
      settle(() =>
        outcome.status === 'extracted' ? resolve(outcome.document) : reject(outcomeError(outcome, timeoutMs)),
      ),
    );
    worker.on('error', (error: Error) => settle(() => reject(threadFailureError(error))));
    worker.on('exit', (exitCode) =>
      settle(() => reject(new Error(`Extraction thread exited without a result (exit code ${exitCode})`))),
    );
  });
}

function startThread(type: DeclaredFileType, bytes: Buffer, timeoutMs: number, maxMemoryMb: number): Worker {
  const transferableBytes = copyToArrayBuffer(bytes);
  const input: ExtractionThreadInput = {
    type,
    bytes: transferableBytes,
    timeoutMs: Math.max(1, timeoutMs - Math.min(MAX_REPORTING_MARGIN_MS, timeoutMs / 10)),
  };
  const entry = resolveThreadEntry();
  return new Worker(entry.filename, {
    workerData: input,
    transferList: [transferableBytes],
    execArgv: entry.execArgv,
    resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb },
  });
}

/**
 * Production runs compiled JavaScript, where the thread entry sits beside this file as `.js`. Under Jest
 * (ts-jest) this module is TypeScript source and there is no compiled entry, so the thread loads the `.ts`
 * entry through ts-node's transpile-only hook.
 */
function resolveThreadEntry(): { filename: string; execArgv?: string[] } {
  if (!__filename.endsWith('.ts')) return { filename: join(__dirname, 'extraction.thread.js') };
  return {
    filename: join(__dirname, 'extraction.thread.ts'),
    execArgv: ['--require', require.resolve('ts-node/register/transpile-only')],
  };
}

/** A fresh ArrayBuffer can be transferred to the thread; a Buffer's may be shared with Node's pool. */
function copyToArrayBuffer(bytes: Buffer): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

function outcomeError(outcome: Exclude<ExtractionThreadOutcome, { status: 'extracted' }>, timeoutMs: number): Error {
  if (outcome.status === 'crashed' || !isExtractionErrorCode(outcome.code)) {
    return new Error(`Extraction failed in thread: ${outcome.message}`);
  }
  // The thread works to a slightly shorter budget; users should see the limit they were given.
  if (outcome.code === 'timeout') return processingTimeoutError(timeoutMs);
  return new ExtractionError(outcome.code, outcome.message);
}

function threadFailureError(error: Error): Error {
  if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new ExtractionError('too_large', 'The document is too large to process');
  }
  return new Error(`Extraction thread failed: ${error.message}`, { cause: error });
}
