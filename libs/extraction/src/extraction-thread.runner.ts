import { join } from 'node:path';
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ExtractionError, isExtractionErrorCode, processingTimeoutError } from './extraction.error';
import type { ExtractionThreadInput, ExtractionThreadOutcome } from './extraction-thread.protocol';
import type { DeclaredFileType, ExtractedDocument } from './extraction.types';

export interface ThreadExtractionOptions {
  /** Hard limit, waiting for a free thread included; the thread is terminated when it runs out. */
  timeoutMs: number;
  /** Heap limit of the thread; exceeding it ends the extraction with `too_large`. */
  maxMemoryMb?: number;
  /** Aborting it stops the extraction (its thread is terminated). */
  signal?: AbortSignal;
  /**
   * The caller will not use `bytes` again: when they fill a memory block of their own (not a slice of Node's
   * shared pool), the block is moved to the thread instead of copied, and `bytes` is left empty.
   */
  handOver?: boolean;
}

const DEFAULT_MAX_MEMORY_MB = 1024;
/**
 * Left to itself, V8 sizes a thread's young generation from its 1,024 MiB heap limit, and a large PDF's
 * normalisation and passage garbage then piles up there: a process extracting a 20 MiB PDF in a thread peaked at
 * 285 MiB, against 237 MiB with this cap (4 and 8 MiB gave the same as 16).
 */
const MAX_YOUNG_GENERATION_MB = 16;
/** The thread stops its own child processes a little early, so they are not left running after termination. */
const MAX_REPORTING_MARGIN_MS = 500;
/**
 * More than a worker runs jobs at once (each job extracts one document at a time), so a job never waits for a
 * thread; threads start only when needed.
 */
const MAX_THREADS = 16;
/** Threads beyond the one kept warm exit after this long idle, returning their memory. */
const IDLE_THREAD_MS = 30_000;

/**
 * A thread keeps what a document made it grow to: PDFium's WebAssembly memory never shrinks and V8 gives a
 * thread's heap back slowly. After the 20 MiB PDF the warm thread still held about 130 MiB while the worker stored
 * the passages, which made the worker's peak. A file this large is extracted in a thread that ends as soon as it is
 * done (that peak: 404-429 MB before, 332-391 MB after; docs/benchmarks.md, section 4). Starting one costs about half
 * a second (the thread and PDFium's compilation), under a tenth of such a file's extraction; smaller files keep the
 * warm threads.
 */
export const OWN_THREAD_MIN_BYTES = 4 * 1024 * 1024;

type ExtractionPool = Piscina<ExtractionThreadInput, ExtractionThreadOutcome>;

/** One pool per heap limit (resource limits are per pool) and kind: warm threads, or threads that end when idle. */
const pools = new Map<string, ExtractionPool>();

function poolFor(maxMemoryMb: number, ownThread: boolean): ExtractionPool {
  const key = `${maxMemoryMb}:${ownThread ? 'own' : 'warm'}`;
  let pool = pools.get(key);
  if (!pool) {
    const entry = resolveThreadEntry();
    pool = new Piscina({
      filename: entry.filename,
      execArgv: entry.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb, maxYoungGenerationSizeMb: MAX_YOUNG_GENERATION_MB },
      maxThreads: MAX_THREADS,
      // A large file's thread leaves as soon as nothing waits for it; the warm pool keeps one thread ready.
      ...(ownThread ? { minThreads: 0, idleTimeout: 0 } : { minThreads: 1, idleTimeout: IDLE_THREAD_MS }),
    });
    pools.set(key, pool);
  }
  return pool;
}

/** The extraction threads alive in this process, for tests and diagnostics. */
export function extractionThreadCount(): number {
  return [...pools.values()].reduce((count, pool) => count + pool.threads.length, 0);
}

/**
 * Stops every extraction thread; a later extraction starts new ones. Idle threads never keep a process alive, so
 * only tests that must leave no thread behind need this.
 */
export async function closeExtractionThreads(): Promise<void> {
  const closing = [...pools.values()];
  pools.clear();
  await Promise.all(closing.map((pool) => pool.destroy()));
}

/**
 * Runs extractPassages in a pooled worker thread, so parsing a large document cannot block the caller's event
 * loop (a BullMQ worker must keep renewing its job lock) and cannot exceed a time or memory budget. Threads are
 * reused: a thread start and the loading of the extraction libraries are paid once, not per document.
 * The passages come over in small batches while the thread works, and the text itself never does, so no single
 * copy of a large document's text is made to cross between the threads.
 * ExtractionErrors raised in the thread are re-thrown here with the same code and message.
 */
export async function runExtractionInThread(
  type: DeclaredFileType,
  bytes: Buffer,
  options: ThreadExtractionOptions,
): Promise<ExtractedDocument> {
  const { timeoutMs, maxMemoryMb = DEFAULT_MAX_MEMORY_MB } = options;
  if (!(timeoutMs > 0) || !(maxMemoryMb > 0)) throw new RangeError('timeoutMs and maxMemoryMb must be positive');
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const pool = poolFor(maxMemoryMb, bytes.byteLength >= OWN_THREAD_MIN_BYTES);
  const transferableBytes = options.handOver && ownsWholeBlock(bytes) ? bytes.buffer : copyToArrayBuffer(bytes);
  const channel = new MessageChannel();
  const passages: string[] = [];
  channel.port1.on('message', (batch: string[]) => appendAll(passages, batch));
  const input: ExtractionThreadInput = {
    type,
    bytes: transferableBytes,
    timeoutMs: Math.max(1, timeoutMs - Math.min(MAX_REPORTING_MARGIN_MS, timeoutMs / 10)),
    passages: channel.port2,
  };
  let outcome: ExtractionThreadOutcome;
  try {
    outcome = await pool.run(input, { transferList: [transferableBytes, channel.port2], signal });
    // Every batch was posted before the outcome, so those not yet delivered are already waiting on the port.
    receiveRemaining(channel.port1, passages);
  } catch (error) {
    if (timeout.aborted) throw processingTimeoutError(timeoutMs);
    if (signal.aborted) throw new Error('Extraction aborted', { cause: error });
    throw threadFailureError(error as Error);
  } finally {
    channel.port1.close();
  }
  if (outcome.status !== 'extracted') throw outcomeError(outcome, timeoutMs);
  if (passages.length !== outcome.passageCount) {
    throw new Error(`Extraction thread posted ${outcome.passageCount} passages, ${passages.length} arrived`);
  }
  return { contentLength: outcome.contentLength, passages };
}

function receiveRemaining(port: MessagePort, passages: string[]): void {
  for (let message = receiveMessageOnPort(port); message; message = receiveMessageOnPort(port)) {
    appendAll(passages, message.message as string[]);
  }
}

/** push(...batch) would pass every passage as an argument; a long batch could exceed the call stack. */
function appendAll(target: string[], batch: string[]): void {
  for (const item of batch) target.push(item);
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

function ownsWholeBlock(bytes: Buffer): bytes is Buffer & { buffer: ArrayBuffer } {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
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
