import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { JobQueue, Jobs, LIVE_JOB_STATES } from '@app/jobs';
import { JobMetrics } from '../job-metrics';
import { DocumentStore } from './document-store.service';

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
    private readonly store: DocumentStore,
    private readonly metrics: JobMetrics,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async sweep(): Promise<{ requeued: number; failed: number }> {
    const stuck: { id: number; type: string }[] = await this.dataSource.query(
      `SELECT id, type FROM documents
        WHERE status = 'processing' AND updated_at < now() - make_interval(secs => $1)
        ORDER BY updated_at LIMIT 500`,
      [this.config.documentStuckAfterSeconds],
    );
    const queue = this.jobs.queue(Jobs.processDocument.queue);
    let requeued = 0;
    let failed = 0;
    for (const document of stuck) {
      const payload = { documentId: document.id };
      const existing = await queue.getJob(Jobs.processDocument.jobId!(payload));
      if (existing && LIVE_JOB_STATES.has(await existing.getState())) continue;

      const rescue = await this.claimRescue(document.id);
      if (rescue === undefined) continue;
      if (rescue > MAX_SWEEPS) {
        if (await this.store.fail(document.id, 'Processing did not complete. Please upload the document again.')) {
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

  /**
   * Claims one rescue of a document and returns its number, or undefined when there is nothing to rescue.
   * The conditions are re-checked on the locked row, so of two sweeps running at once only one counts a rescue,
   * and a document that finished meanwhile is not counted at all. Touching updated_at restarts the deadline.
   */
  private async claimRescue(documentId: number): Promise<number | undefined> {
    const [rows] = (await this.dataSource.query(
      `UPDATE documents SET sweep_count = sweep_count + 1, updated_at = now()
        WHERE id = $1 AND status = 'processing' AND updated_at < now() - make_interval(secs => $2)
        RETURNING sweep_count`,
      [documentId, this.config.documentStuckAfterSeconds],
    )) as [{ sweep_count: number }[], number];
    return rows[0]?.sweep_count;
  }
}
