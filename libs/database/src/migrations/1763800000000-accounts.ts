import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Accounts1763800000000 implements MigrationInterface {
  name = 'Accounts1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name varchar(255) NOT NULL,
        email varchar(255) NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_unique ON users (lower(email))`);

    await queryRunner.query(`
      CREATE TABLE api_keys (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        token_hash char(64) NOT NULL,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX api_keys_token_hash_unique ON api_keys (token_hash)`);
    await queryRunner.query(`CREATE INDEX api_keys_user_id_id ON api_keys (user_id, id)`);

    await queryRunner.query(`
      CREATE TABLE session_tokens (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        token_hash char(64) NOT NULL,
        expires_at timestamptz NOT NULL,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX session_tokens_token_hash_unique ON session_tokens (token_hash)`);
    await queryRunner.query(`CREATE INDEX session_tokens_user_id ON session_tokens (user_id)`);
    await queryRunner.query(`CREATE INDEX session_tokens_expires_at ON session_tokens (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE session_tokens`);
    await queryRunner.query(`DROP TABLE api_keys`);
    await queryRunner.query(`DROP TABLE users`);
  }
}
