import { MigrationInterface, QueryRunner } from 'typeorm';

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
    // A build interrupted earlier leaves an invalid index of the same name behind.
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS passages_knowledgebase_search`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY passages_knowledgebase_search ON passages USING gin (knowledgebase_id, search_vector)`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS passages_search_vector`);

    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS knowledgebase_lexemes_knowledgebase_trigram`);
    await queryRunner.query(`
      CREATE INDEX CONCURRENTLY knowledgebase_lexemes_knowledgebase_trigram
        ON knowledgebase_lexemes USING gin (knowledgebase_id, lexeme gin_trgm_ops)`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS knowledgebase_lexemes_trigram`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS knowledgebase_lexemes_trigram`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY knowledgebase_lexemes_trigram ON knowledgebase_lexemes USING gin (lexeme gin_trgm_ops)`,
    );
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS knowledgebase_lexemes_knowledgebase_trigram`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS passages_search_vector`);
    await queryRunner.query(`CREATE INDEX CONCURRENTLY passages_search_vector ON passages USING gin (search_vector)`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS passages_knowledgebase_search`);
  }
}
