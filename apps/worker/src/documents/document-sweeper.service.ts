import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { JobQueue, Jobs } from '@app/jobs';
import { DocumentStore } from './document-store.service';

/** After this many re-enqueues a document that never finishes is failed rather than retried forever. */
const MAX_SWEEPS = 3;
/** States in which BullMQ still owns the job; the sweeper leaves those alone. */
const LIVE_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

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
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async sweep(): Promise<{ requeued: number; failed: number }> {
    const stuck: { id: number; sweep_count: number }[] = await this.dataSource.query(
      `SELECT id, sweep_count FROM documents
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
      if (existing && LIVE_STATES.has(await existing.getState())) continue;

      if (document.sweep_count >= MAX_SWEEPS) {
        if (await this.store.fail(document.id, 'Processing did not complete. Please upload the document again.'))
          failed++;
        continue;
      }
      // Touching updated_at restarts the deadline, so one slow sweep is not followed by another at once.
      await this.dataSource.query(
        `UPDATE documents SET sweep_count = sweep_count + 1, updated_at = now() WHERE id = $1`,
        [document.id],
      );
      await existing?.remove();
      await this.jobs.enqueue(Jobs.processDocument, payload);
      requeued++;
    }
    if (requeued + failed > 0) this.logger.log({ requeued, failed }, 'swept stuck documents');
    return { requeued, failed };
  }
}
