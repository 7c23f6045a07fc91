import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { replaceIndexConcurrently } from '../replace-index';

/**
 * The full-text index and the vocabulary's trigram index answer per knowledgebase: each leads with the
 * knowledgebase (btree_gin, a contrib extension PostgreSQL ships and managed services allow), so a small
 * knowledgebase's search intersects its own postings instead of reading every knowledgebase's entries for a word
 * and discarding the others' rows. Built concurrently (outside a transaction), so ingestion and searches go on
 * meanwhile; the old indexes are dropped only once the new ones are valid.
 */
export class SearchPerKnowledgebase1764117300000 implements MigrationInterface {
  name = 'SearchPerKnowledgebase1764117300000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    await replaceIndexConcurrently(
      queryRunner,
      'passages_knowledgebase_search',
      'passages USING gin (knowledgebase_id, search_vector)',
      'passages_search_vector',
    );
    await replaceIndexConcurrently(
      queryRunner,
      'knowledgebase_lexemes_knowledgebase_trigram',
      'knowledgebase_lexemes USING gin (knowledgebase_id, lexeme gin_trgm_ops)',
      'knowledgebase_lexemes_trigram',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'knowledgebase_lexemes_trigram',
      'knowledgebase_lexemes USING gin (lexeme gin_trgm_ops)',
      'knowledgebase_lexemes_knowledgebase_trigram',
    );
    await replaceIndexConcurrently(
      queryRunner,
      'passages_search_vector',
      'passages USING gin (search_vector)',
      'passages_knowledgebase_search',
    );
  }
}
