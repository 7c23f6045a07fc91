import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { DocumentJob, JobHandler, JobProcessor, Jobs, KnowledgebaseJob, Queues } from '@app/jobs';
import { DocumentIngestion } from './document-ingestion.service';
import { DocumentRefresh } from './document-refresh.service';
import { KnowledgebaseReindex } from './knowledgebase-reindex.service';

@Injectable()
export class DocumentsProcessor extends JobProcessor {
  readonly queueName = Queues.documents;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.processDocument.name]: (job) => this.ingestion.process(job as Job<DocumentJob>),
    [Jobs.reindexKnowledgebase.name]: (job) =>
      this.reindexing.reindex((job as Job<KnowledgebaseJob>).data.knowledgebaseId),
  };

  constructor(
    private readonly ingestion: DocumentIngestion,
    private readonly reindexing: KnowledgebaseReindex,
  ) {
    super();
  }
}

/** Website refreshes, on their own queue so that many due at once never hold up new documents. */
@Injectable()
export class RefreshesProcessor extends JobProcessor {
  readonly queueName = Queues.refreshes;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.refreshDocument.name]: (job) => this.refreshes.refresh(job as Job<DocumentJob>),
  };

  constructor(private readonly refreshes: DocumentRefresh) {
    super();
  }
}
