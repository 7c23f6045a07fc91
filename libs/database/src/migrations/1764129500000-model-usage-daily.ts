import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Tokens the platform's model provider spent for an account, a row per UTC day and purpose (post-call analysis,
 * embeddings of documents, of searches), added to by every answer the provider gives. One row per key, so an
 * account's usage over a range is a short index scan; the account's rows go with it.
 */
export class ModelUsageDaily1764129500000 implements MigrationInterface {
  name = 'ModelUsageDaily1764129500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE model_usage_daily (
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        day date NOT NULL,
        purpose varchar(32) NOT NULL,
        requests integer NOT NULL,
        prompt_tokens bigint NOT NULL,
        completion_tokens bigint NOT NULL,
        total_tokens bigint NOT NULL,
        PRIMARY KEY (user_id, day, purpose)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE model_usage_daily`);
  }
}
