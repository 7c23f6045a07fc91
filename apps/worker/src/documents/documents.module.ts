import { Module } from '@nestjs/common';
import { DocumentIngestion } from './document-ingestion.service';
import { DocumentStore } from './document-store.service';
import { DocumentSweeper } from './document-sweeper.service';
import { DocumentsProcessor } from './documents.processor';
import { OutboundHttp } from './outbound-http.provider';

/** Document ingestion: the processor, what it uses, and the sweeper the maintenance queue runs. */
@Module({
  providers: [DocumentsProcessor, DocumentIngestion, DocumentStore, DocumentSweeper, OutboundHttp],
  exports: [DocumentsProcessor, DocumentSweeper],
})
export class DocumentsModule {}
