import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Marks the ended calls whose webhook is still to be delivered, so a sweep can find a delivery whose job was lost
 * (a Redis master that acknowledged the job and died before its replica had it) without reading every call. The
 * flag is cleared once a delivery succeeds or gives up, which keeps the partial index as small as the backlog.
 * Adding a column with a constant default rewrites nothing; the index is built concurrently.
 */
export class CallWebhooksDue1764122000000 implements MigrationInterface {
  name = 'CallWebhooksDue1764122000000';
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE calls ADD COLUMN IF NOT EXISTS webhook_due boolean NOT NULL DEFAULT false`);
    // A build interrupted earlier leaves an invalid index of this name behind.
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_webhook_due`);
    await queryRunner.query(`CREATE INDEX CONCURRENTLY calls_webhook_due ON calls (ended_at) WHERE webhook_due`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS calls_webhook_due`);
    await queryRunner.query(`ALTER TABLE calls DROP COLUMN IF EXISTS webhook_due`);
  }
}
