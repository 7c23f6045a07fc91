import { Module } from '@nestjs/common';
import { Knowledgebase, tenantRepositoryProvider } from '@app/database';
import { DocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';
import { KnowledgebasesController } from './knowledgebases.controller';
import { KnowledgebasesService } from './knowledgebases.service';

@Module({
  controllers: [KnowledgebasesController, DocumentsController],
  providers: [KnowledgebasesService, DocumentsService, tenantRepositoryProvider(Knowledgebase)],
  exports: [KnowledgebasesService],
})
export class KnowledgebasesModule {}
