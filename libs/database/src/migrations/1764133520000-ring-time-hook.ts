import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The ring-time hook: a phone number's own `server_url` (with its timeout and sealed signing secret), the account's
 * default in `user_settings`, and what came of the hook on each call (`calls.assistant_request`, null for a call no
 * hook was asked about).
 */
export class RingTimeHook1764133520000 implements MigrationInterface {
  name = 'RingTimeHook1764133520000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE phone_numbers
        ADD COLUMN server_url varchar(2048),
        ADD COLUMN server_timeout_ms integer NOT NULL DEFAULT 2000,
        ADD COLUMN server_secret_sealed text`);
    await queryRunner.query(`
      CREATE TABLE user_settings (
        user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        server_url varchar(2048),
        server_timeout_ms integer NOT NULL DEFAULT 2000,
        server_secret_sealed text,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`ALTER TABLE calls ADD COLUMN assistant_request jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE calls DROP COLUMN assistant_request`);
    await queryRunner.query(`DROP TABLE user_settings`);
    await queryRunner.query(`
      ALTER TABLE phone_numbers
        DROP COLUMN server_url, DROP COLUMN server_timeout_ms, DROP COLUMN server_secret_sealed`);
  }
}
