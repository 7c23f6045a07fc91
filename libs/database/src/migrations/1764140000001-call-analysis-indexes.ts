import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The call list's `success` filter reads an account's graded calls newest first (a partial index: ungraded calls,
 * most of them, are not in it); the worker's sweep finds analyses and `call.analyzed` deliveries whose job was lost
 * in an index as small as that backlog. Built concurrently, so ingestion and lists go on meanwhile.
 */
export class CallAnalysisIndexes1764140000001 implements MigrationInterface {
  name = 'CallAnalysisIndexes1764140000001';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    // A build interrupted earlier leaves an invalid index of the same name behind.
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_user_id_success_id`);
    await queryRunner.query(`
      CREATE INDEX CONCURRENTLY calls_user_id_success_id ON calls (user_id, analysis_success, id DESC)
        WHERE analysis_success IS NOT NULL`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_analysis_owed`);
    await queryRunner.query(`
      CREATE INDEX CONCURRENTLY calls_analysis_owed ON calls (analysis_changed_at)
        WHERE analysis->>'status' = 'pending' OR analysis_webhook_due`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_analysis_owed`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_user_id_success_id`);
  }
}
