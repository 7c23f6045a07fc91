import { Injectable, Logger } from '@nestjs/common';
import { DocumentsRepository } from '@app/database';
import { HandlesJob, Jobs, KnowledgebaseJob } from '@app/jobs';

/** Passages re-indexed per statement, so one knowledgebase's re-index never holds long locks. */
const REINDEX_BATCH = 1000;

/**
 * Moves a knowledgebase's passages to its language's text search configuration. Each batch reads the language
 * again, so a language changed twice while this runs still ends on the latest; the vocabulary counts follow
 * through the passages' triggers.
 */
@Injectable()
export class KnowledgebaseReindex {
  private readonly logger = new Logger(KnowledgebaseReindex.name);

  constructor(private readonly documents: DocumentsRepository) {}

  @HandlesJob(Jobs.reindexKnowledgebase)
  async reindex({ knowledgebaseId }: KnowledgebaseJob): Promise<{ status: string; passages: number }> {
    let passages = 0;
    for (;;) {
      const changed = await this.documents.reindexPassages(knowledgebaseId, REINDEX_BATCH);
      passages += changed;
      if (changed < REINDEX_BATCH) break;
    }
    if (passages > 0) this.logger.log({ knowledgebaseId, passages }, 're-indexed knowledgebase');
    return { status: 'reindexed', passages };
  }
}
