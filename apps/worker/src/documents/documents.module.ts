import { Module } from '@nestjs/common';
import { ModelProviderModule } from '@app/model-provider';
import { OutboundHttpModule } from '@app/outbound-http';
import { CRAWLER_USER_AGENT } from './crawler-user-agent';
import { DocumentIngestion } from './document-ingestion.service';
import { DocumentSweeper } from './document-sweeper.service';
import { DocumentRefresh } from './document-refresh.service';
import { KnowledgebaseReindex } from './knowledgebase-reindex.service';
import { PassageEmbedding } from './passage-embedding.service';
import { PassageRecut } from './passage-recut.service';

/** Documents: ingestion, website refreshes and their schedule, re-indexing, re-cutting, embedding, and the stuck sweep. */
@Module({
  imports: [OutboundHttpModule.forRoot(CRAWLER_USER_AGENT), ModelProviderModule],
  providers: [
    DocumentIngestion,
    DocumentSweeper,
    DocumentRefresh,
    KnowledgebaseReindex,
    PassageRecut,
    PassageEmbedding,
  ],
})
export class DocumentsModule {}
