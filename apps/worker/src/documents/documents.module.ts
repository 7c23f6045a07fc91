import { Module } from '@nestjs/common';
import { OutboundHttpModule } from '@app/outbound-http';
import { CRAWLER_USER_AGENT } from './crawler-user-agent';
import { DocumentIngestion } from './document-ingestion.service';
import { DocumentSweeper } from './document-sweeper.service';
import { DocumentRefresh } from './document-refresh.service';
import { KnowledgebaseReindex } from './knowledgebase-reindex.service';
import { PassageRecut } from './passage-recut.service';

/** Documents: ingestion, website refreshes and their schedule, re-indexing, re-cutting, and the stuck sweep. */
@Module({
  imports: [OutboundHttpModule.forRoot(CRAWLER_USER_AGENT)],
  providers: [DocumentIngestion, DocumentSweeper, DocumentRefresh, KnowledgebaseReindex, PassageRecut],
})
export class DocumentsModule {}
