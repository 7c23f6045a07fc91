import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { DocumentsRepository } from '@app/database';
import { HandlesJob, JobQueue, Jobs, LIVE_JOB_STATES } from '@app/jobs';
import { JobMetrics } from '../job-metrics';

/** After this many re-enqueues a document that never finishes is failed rather than retried forever. */
const MAX_SWEEPS = 3;

/**
 * The outbox's other half: documents still `processing` past their deadline whose job is gone (lost between the
 * API's write and its enqueue, or finished without moving the row) are enqueued again.
 */
@Injectable()
export class DocumentSweeper {
  private readonly logger = new Logger(DocumentSweeper.name);

  constructor(
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
    private readonly metrics: JobMetrics,
    private readonly documents: DocumentsRepository,
  ) {}

  @HandlesJob(Jobs.sweepStuckDocuments)
  async sweep(): Promise<{ requeued: number; failed: number }> {
    const stuck = await this.documents.stuckProcessing(this.config.documentStuckAfterSeconds);
    const queue = this.jobs.queue(Jobs.processDocument.queue);
    let requeued = 0;
    let failed = 0;
    for (const document of stuck) {
      const payload = { documentId: document.id };
      const existing = await queue.getJob(Jobs.processDocument.jobId!(payload));
      if (existing && LIVE_JOB_STATES.has(await existing.getState())) continue;

      // Re-checked on the locked row, so of two sweeps running at once only one counts a rescue, and a document that
      // finished meanwhile is not counted at all.
      const rescue = await this.documents.claimRescue(document.id, this.config.documentStuckAfterSeconds);
      if (rescue === undefined) continue;
      if (rescue > MAX_SWEEPS) {
        if (await this.documents.fail(document.id, 'Processing did not complete. Please upload the document again.')) {
          this.metrics.documentFinished(document.type, 'failed');
          failed++;
        }
        continue;
      }
      await existing?.remove();
      await this.jobs.enqueue(Jobs.processDocument, payload);
      requeued++;
    }
    if (requeued + failed > 0) this.logger.log({ requeued, failed }, 'swept stuck documents');
    this.metrics.jobsRequeued(Jobs.processDocument.name, requeued);
    return { requeued, failed };
  }
}
