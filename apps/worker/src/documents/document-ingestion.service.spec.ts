import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { AppConfig } from '@app/config';
import type { DocumentsRepository } from '@app/database';
import { OWN_THREAD_MIN_BYTES, closeExtractionThreads } from '@app/extraction';
import type { DocumentJob } from '@app/jobs';
import type { OutboundHttp } from '@app/outbound-http';
import type { JobMetrics } from '../job-metrics';
import type { PassageEmbedding } from './passage-embedding.service';
import { DocumentIngestion } from './document-ingestion.service';

/** Resolves once `condition` holds, checked every 5 ms (the extraction runs in a thread). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * TXT documents in memory, `large` ones declaring a file of 4 MiB (their bytes are a sentence: only the declared size
 * decides). The repository's `complete` of each document waits until the test lets it finish or fail.
 */
function fakes(largeFilesAtOnce: number, sizes: Record<number, 'large' | 'small'>) {
  const read: number[] = [];
  const completing = new Map<number, { finish: () => void; fail: (error: Error) => void }>();
  const documents = {
    findProcessing: async (id: number) => ({
      id,
      type: 'txt',
      fileSize: sizes[id] === 'large' ? OWN_THREAD_MIN_BYTES : 1024,
    }),
    fileContent: async (id: number) => {
      read.push(id);
      return Buffer.from(`Document ${id} says the parcel arrives in two days.`);
    },
    complete: (id: number) =>
      new Promise<boolean>((resolve, reject) =>
        completing.set(id, { finish: () => resolve(true), fail: (error) => reject(error) }),
      ),
    fail: async () => true,
  };
  let largeFiles: { activeCount: number; pendingCount: number } | undefined;
  const metrics = {
    watchLargeFiles: (limit: typeof largeFiles) => (largeFiles = limit),
    documentFinished: () => undefined,
  };
  const ingestion = new DocumentIngestion(
    { workerLargeFilesAtOnce: largeFilesAtOnce, extractionTimeoutSeconds: 60 } as AppConfig,
    documents as unknown as DocumentsRepository,
    {} as OutboundHttp,
    metrics as unknown as JobMetrics,
    { enqueue: () => Promise.resolve() } as unknown as PassageEmbedding,
  );
  const job = (documentId: number) =>
    ({ data: { documentId }, attemptsMade: 0, opts: { attempts: 3 } }) as unknown as Job<DocumentJob>;
  return { ingestion, job, read, completing, largeFiles: () => largeFiles! };
}

describe('DocumentIngestion, large files at once', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => closeExtractionThreads());

  it('reads a large file only once the one before it is stored, and never holds a small one', async () => {
    const { ingestion, job, read, completing, largeFiles } = fakes(1, { 1: 'large', 2: 'large', 3: 'small' });
    const first = ingestion.process({ documentId: 1 }, job(1));
    const second = ingestion.process({ documentId: 2 }, job(2));
    const small = ingestion.process({ documentId: 3 }, job(3));
    await until(() => completing.has(1) && completing.has(3));
    // The second large file waits: its bytes are not even read while the first is being stored.
    expect(read).toEqual(expect.arrayContaining([1, 3]));
    expect(read).not.toContain(2);
    expect([largeFiles().activeCount, largeFiles().pendingCount]).toEqual([1, 1]);
    completing.get(3)!.finish();
    await expect(small).resolves.toEqual({ status: 'active' });

    completing.get(1)!.finish();
    await expect(first).resolves.toEqual({ status: 'active' });
    await until(() => completing.has(2));
    expect(read).toContain(2);
    completing.get(2)!.finish();
    await expect(second).resolves.toEqual({ status: 'active' });
    expect([largeFiles().activeCount, largeFiles().pendingCount]).toEqual([0, 0]);
  });

  it('gives the turn on when a large file fails, so the next is not lost', async () => {
    const { ingestion, job, completing } = fakes(1, { 1: 'large', 2: 'large' });
    const first = ingestion.process({ documentId: 1 }, job(1));
    const second = ingestion.process({ documentId: 2 }, job(2));
    await until(() => completing.has(1));
    completing.get(1)!.fail(new Error('connection lost'));
    // Not the last attempt: the job throws, to be retried.
    await expect(first).rejects.toThrow('connection lost');
    await until(() => completing.has(2));
    completing.get(2)!.finish();
    await expect(second).resolves.toEqual({ status: 'active' });
  });

  it('reads as many large files at once as WORKER_LARGE_FILES_AT_ONCE allows', async () => {
    const { ingestion, job, read, completing, largeFiles } = fakes(2, { 1: 'large', 2: 'large', 3: 'large' });
    const all = [1, 2, 3].map((id) => ingestion.process({ documentId: id }, job(id)));
    await until(() => completing.has(1) && completing.has(2));
    expect(read).not.toContain(3);
    expect(largeFiles().pendingCount).toBe(1);
    completing.get(1)!.finish();
    await until(() => completing.has(3));
    completing.get(2)!.finish();
    completing.get(3)!.finish();
    await expect(Promise.all(all)).resolves.toEqual([1, 2, 3].map(() => ({ status: 'active' })));
  });
});
