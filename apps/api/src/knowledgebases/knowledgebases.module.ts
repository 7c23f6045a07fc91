import { Module } from '@nestjs/common';
import {
  Document,
  DocumentsRepository,
  Knowledgebase,
  KnowledgebaseSummaries,
  LanguagesRepository,
  PassageSearch,
  tenantRepositoryProvider,
} from '@app/database';
import { DocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';
import { KnowledgebasesController } from './knowledgebases.controller';
import { KnowledgebasesService } from './knowledgebases.service';

@Module({
  controllers: [KnowledgebasesController, DocumentsController],
  providers: [
    KnowledgebasesService,
    DocumentsService,
    DocumentsRepository,
    KnowledgebaseSummaries,
    LanguagesRepository,
    PassageSearch,
    tenantRepositoryProvider(Knowledgebase),
    tenantRepositoryProvider(Document),
  ],
  exports: [KnowledgebasesService],
})
export class KnowledgebasesModule {}
