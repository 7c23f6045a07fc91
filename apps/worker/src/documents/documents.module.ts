import { Module } from '@nestjs/common';
import { OutboundHttpModule } from '@app/outbound-http';
import { CRAWLER_USER_AGENT } from './crawler-user-agent';
import { DocumentIngestion } from './document-ingestion.service';
import { DocumentSweeper } from './document-sweeper.service';
import { DocumentRefresh } from './document-refresh.service';
import { DocumentsProcessor, RefreshesProcessor } from './documents.processor';
import { KnowledgebaseReindex } from './knowledgebase-reindex.service';
import { PassageRecut } from './passage-recut.service';

/** Document ingestion: the processor, what it uses, and the sweeper the maintenance queue runs. */
@Module({
  imports: [OutboundHttpModule.forRoot(CRAWLER_USER_AGENT)],
  providers: [
    DocumentsProcessor,
    RefreshesProcessor,
    DocumentIngestion,
    DocumentSweeper,
    DocumentRefresh,
    KnowledgebaseReindex,
    PassageRecut,
  ],
  exports: [DocumentsProcessor, RefreshesProcessor, DocumentSweeper, DocumentRefresh, PassageRecut],
})
export class DocumentsModule {}
