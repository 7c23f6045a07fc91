import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class IdempotencyKeys1763800000050 implements MigrationInterface {
  name = 'IdempotencyKeys1763800000050';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One row per (account, Idempotency-Key): the first request's fingerprint and, once it succeeded, its answer.
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        request_hash char(64) NOT NULL,
        response_status integer,
        response_body jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      )`);
    await queryRunner.query(`CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
  }
}
