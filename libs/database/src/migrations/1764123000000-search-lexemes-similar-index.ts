import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { replaceIndexConcurrently } from '../replace-index';

/**
 * The knowledgebase's words similar to a misspelt one are found through a trigram index. Over the plain `lexeme`
 * column that index also answers `=` (pg_trgm 1.6), and the planner chose it for the exact look-ups of the query's
 * words and their related words, each of which then read the knowledgebase's whole posting list (about 3 ms a
 * look-up; a question with related words makes dozens). Over `lower(lexeme)` (lexemes are lower case already, so the
 * similarity is the same) it serves only the similarity search, and the exact look-ups take the primary key.
 * Built concurrently, the old index dropped once the new one is valid.
 */
export class SearchLexemesSimilarIndex1764123000000 implements MigrationInterface {
  name = 'SearchLexemesSimilarIndex1764123000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'knowledgebase_lexemes_similar',
      'knowledgebase_lexemes USING gin (knowledgebase_id, lower(lexeme) gin_trgm_ops)',
      'knowledgebase_lexemes_knowledgebase_trigram',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await replaceIndexConcurrently(
      queryRunner,
      'knowledgebase_lexemes_knowledgebase_trigram',
      'knowledgebase_lexemes USING gin (knowledgebase_id, lexeme gin_trgm_ops)',
      'knowledgebase_lexemes_similar',
    );
  }
}
