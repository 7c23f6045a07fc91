import { Module } from '@nestjs/common';
import { Knowledgebase, tenantRepositoryProvider } from '@app/database';
import { ModelProviderModule } from '@app/model-provider';
import { DocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';
import { KnowledgebasesController } from './knowledgebases.controller';
import { KnowledgebasesService } from './knowledgebases.service';
import { MeaningSearch } from './meaning-search';

@Module({
  imports: [ModelProviderModule],
  controllers: [KnowledgebasesController, DocumentsController],
  providers: [KnowledgebasesService, DocumentsService, MeaningSearch, tenantRepositoryProvider(Knowledgebase)],
  exports: [KnowledgebasesService],
})
export class KnowledgebasesModule {}
