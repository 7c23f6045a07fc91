import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Calls by age, for CALL_RETENTION_DAYS: the purge reads the oldest calls of every account through this index
 * instead of scanning the table. Built concurrently (outside a transaction), so ingestion and lists go on meanwhile.
 */
export class CallsByAge1763800000130 implements MigrationInterface {
  name = 'CallsByAge1763800000130';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    // A build interrupted earlier leaves an invalid index of this name behind.
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_created_at`);
    await queryRunner.query(`CREATE INDEX CONCURRENTLY calls_created_at ON calls (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_created_at`);
  }
}
