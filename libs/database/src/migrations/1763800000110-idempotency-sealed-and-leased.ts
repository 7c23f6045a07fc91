import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Replay answers are kept sealed (they can carry an API key's token, a tool's header values, a webhook secret), and
 * a key still being processed is held by a lease its request renews, so a key whose process died is taken over by
 * the retry within seconds instead of answering 409 for a day. Answers stored in plaintext before this migration
 * are deleted rather than sealed here (a migration has no encryption key): a retry of such a create is then taken
 * as a new request.
 */
export class IdempotencySealedAndLeased1763800000110 implements MigrationInterface {
  name = 'IdempotencySealedAndLeased1763800000110';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM idempotency_keys WHERE response_body IS NOT NULL`);
    await queryRunner.query(`
      ALTER TABLE idempotency_keys
        DROP COLUMN response_body,
        ADD COLUMN response_sealed text,
        ADD COLUMN lease_until timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM idempotency_keys WHERE response_sealed IS NOT NULL`);
    await queryRunner.query(`
      ALTER TABLE idempotency_keys
        DROP COLUMN lease_until,
        DROP COLUMN response_sealed,
        ADD COLUMN response_body jsonb`);
  }
}
