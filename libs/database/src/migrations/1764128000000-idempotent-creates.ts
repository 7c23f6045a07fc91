import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * What a create made under an Idempotency-Key, written in the create's own transaction: if its process dies after
 * the commit and before the answer is kept, the retry answers that resource instead of creating it again. An API
 * key's token, shown only in the create's answer, is kept with it sealed like the answers themselves.
 */
export class IdempotentCreates1764128000000 implements MigrationInterface {
  name = 'IdempotentCreates1764128000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE idempotency_keys
        ADD COLUMN created_kind varchar(32),
        ADD COLUMN created_id bigint,
        ADD COLUMN created_secret_sealed text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE idempotency_keys
        DROP COLUMN created_secret_sealed,
        DROP COLUMN created_id,
        DROP COLUMN created_kind`);
  }
}
