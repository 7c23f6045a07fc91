import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

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

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async reindex(knowledgebaseId: number): Promise<{ status: string; passages: number }> {
    let passages = 0;
    for (;;) {
      const [, changed] = (await this.dataSource.query(
        `UPDATE passages SET search_config = target.config
           FROM (SELECT knowledgebase_search_config($1) AS config) target
          WHERE passages.id IN (SELECT id FROM passages
                                 WHERE knowledgebase_id::bigint = $1 AND search_config <> knowledgebase_search_config($1)
                                 ORDER BY id LIMIT $2)`,
        [knowledgebaseId, REINDEX_BATCH],
      )) as [unknown, number];
      passages += changed;
      if (changed < REINDEX_BATCH) break;
    }
    if (passages > 0) this.logger.log({ knowledgebaseId, passages }, 're-indexed knowledgebase');
    return { status: 'reindexed', passages };
  }
}
