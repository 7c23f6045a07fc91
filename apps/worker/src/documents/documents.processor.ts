import { Injectable } from '@nestjs/common';
import { Job } from 'bullmq';
import { DocumentJob, JobHandler, JobProcessor, Jobs, Queues } from '@app/jobs';
import { DocumentIngestion } from './document-ingestion.service';

@Injectable()
export class DocumentsProcessor extends JobProcessor {
  readonly queueName = Queues.documents;

  protected readonly handlers: Record<string, JobHandler> = {
    [Jobs.processDocument.name]: (job) => this.ingestion.process(job as Job<DocumentJob>),
  };

  constructor(private readonly ingestion: DocumentIngestion) {
    super();
  }
}
