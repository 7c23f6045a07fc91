import { Injectable } from '@nestjs/common';
import { handle, JobProcessor, Jobs, Queues } from '@app/jobs';
import { DocumentIngestion } from './document-ingestion.service';
import { DocumentRefresh } from './document-refresh.service';
import { KnowledgebaseReindex } from './knowledgebase-reindex.service';

@Injectable()
export class DocumentsProcessor extends JobProcessor {
  readonly queueName = Queues.documents;

  protected readonly handlers = [
    handle(Jobs.processDocument, (job) => this.ingestion.process(job)),
    handle(Jobs.reindexKnowledgebase, (job) => this.reindexing.reindex(job.data.knowledgebaseId)),
  ];

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

  protected readonly handlers = [handle(Jobs.refreshDocument, (job) => this.refreshes.refresh(job))];

  constructor(private readonly refreshes: DocumentRefresh) {
    super();
  }
}
