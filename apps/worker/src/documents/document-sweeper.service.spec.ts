import { Logger } from '@nestjs/common';
import type { AppConfig } from '@app/config';
import type { DocumentsRepository } from '@app/database';
import { Jobs, type JobQueue } from '@app/jobs';
import type { JobMetrics } from '../job-metrics';
import { DocumentSweeper } from './document-sweeper.service';

/** Stuck documents with their rescues so far and their jobs' states, in memory; what the sweep does is logged. */
function fakes(stuck: { id: number; type: string; rescues: number; job?: string; finished?: boolean }[]) {
  const log: unknown[][] = [];
  const documents = {
    stuckProcessing: async (seconds: number) => {
      log.push(['stuckProcessing', seconds]);
      return stuck.map(({ id, type }) => ({ id, type }));
    },
    claimRescue: async (id: number) => {
      const document = stuck.find((each) => each.id === id)!;
      return document.finished ? undefined : ++document.rescues;
    },
    fail: async (id: number) => (log.push(['fail', id]), true),
  };
  const queue = {
    getJob: async (jobId: string) => {
      const document = stuck.find((each) => Jobs.processDocument.jobId!({ documentId: each.id }) === jobId);
      return (
        document?.job && {
          getState: async () => document.job,
          remove: async () => void log.push(['remove', document.id]),
        }
      );
    },
  };
  const jobs = {
    queue: () => queue,
    enqueue: async (job: { name: string }, payload: object) => void log.push(['enqueue', job.name, payload]),
  };
  const metrics = { documentFinished: () => undefined, jobsRequeued: () => undefined };
  const sweeper = new DocumentSweeper(
    { documentStuckAfterSeconds: 600 } as AppConfig,
    jobs as unknown as JobQueue,
    metrics as unknown as JobMetrics,
    documents as unknown as DocumentsRepository,
  );
  return { sweeper, log };
}

describe('DocumentSweeper, with a fake repository', () => {
  // Each run logs what it did; a unit run has no one to read it.
  beforeAll(() => Logger.overrideLogger(false));

  it('enqueues again the stuck documents whose job is gone or dead, and fails one past its third rescue', async () => {
    const { sweeper, log } = fakes([
      { id: 1, type: 'pdf', rescues: 0 },
      { id: 2, type: 'pdf', rescues: 0, job: 'active' },
      { id: 3, type: 'txt', rescues: 1, job: 'failed' },
      { id: 4, type: 'txt', rescues: 3 },
      { id: 5, type: 'txt', rescues: 0, finished: true },
    ]);
    await expect(sweeper.sweep()).resolves.toEqual({ requeued: 2, failed: 1 });
    expect(log).toEqual([
      ['stuckProcessing', 600],
      ['enqueue', Jobs.processDocument.name, { documentId: 1 }],
      ['remove', 3],
      ['enqueue', Jobs.processDocument.name, { documentId: 3 }],
      ['fail', 4],
    ]);
  });
});
